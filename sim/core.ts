// Everything one simulator instance holds, shared by the HTTP pipeline, the control API and the /_sim/ endpoints.
import { SimClock } from "./clock";
import { Engine } from "./engine";
import { Faults } from "./faults";
import { Interleaver } from "./interleave";
import type { Settings } from "./options";
import { seededRandom, type Random } from "./random";
import { Stats } from "./stats";
import { SpecConformance, type SpecConformanceOptions } from "./specConformance";
import { Throttler } from "./throttle";

export interface SimCore {
  settings: Settings;
  clock: SimClock;
  engine: Engine;
  stats: Stats;
  throttler: Throttler;
  faults: Faults;
  interleaver: Interleaver;
  random: Random;
  /** Draws NRP's transient failures: its own stream, so a failure rate does not shift the jitter of a seed. */
  nrpRandom: Random;
  /** Checks exchanges against Azure's OpenAPI definitions, when given them. */
  spec: SpecConformance | undefined;
}

export function createCore(settings: Settings, spec?: SpecConformanceOptions): SimCore {
  const clock = new SimClock(settings.timeScale);
  return {
    settings,
    clock,
    // Its own stream, so the ETag bump's delays do not shift the latency jitter of a given seed.
    engine: new Engine(settings, clock, seededRandom(settings.randomSeed + 1)),
    stats: new Stats(),
    throttler: new Throttler(settings.throttlingEnforced, settings.refill, settings.policyNaming),
    faults: new Faults(),
    interleaver: new Interleaver(),
    random: seededRandom(settings.randomSeed),
    nrpRandom: seededRandom(settings.randomSeed + 2),
    spec: spec ? new SpecConformance(spec) : undefined,
  };
}

/** Forgets everything but the settings: resources, operations, events, stats, faults, buckets. */
export function resetCore(core: SimCore): void {
  core.engine.reset();
  core.stats.reset();
  core.faults.clear();
  core.interleaver.clear();
  core.throttler = new Throttler(core.settings.throttlingEnforced, core.settings.refill, core.settings.policyNaming);
}
