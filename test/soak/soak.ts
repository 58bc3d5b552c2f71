// The randomized soak: the pipeline — queue trigger, Event Grid deliveries, the timer, other writers and every
// fault the platform can deliver — driven by one seeded PRNG, bounded in steps and in time, then quiesced and
// checked against the invariants. The decisions (which action at which step, on what) come from the seed; how they
// interleave with the real clock does not, so a violation is reported with its seed and the step log to replay it.
//
// In sections: the world (./world), the run's bookkeeping (./run), the app's processes (./hosts), delivery to
// them (./delivery), the chaos (./chaos), the quiesce and the invariants (./invariants), the report (./report).
import { runChaos } from "./chaos";
import { Delivery } from "./delivery";
import { Hosts } from "./hosts";
import { checkInvariants, quiesce } from "./invariants";
import { faultRows, type FaultRow } from "./report";
import { SoakRun, type SoakOptions } from "./run";
import { startWorld } from "./world";

// The whole plan of a run follows from its seed, through the simulator's seeded PRNG.
export { seededRandom as prng } from "../../sim/random";
export { formatTable, type FaultRow } from "./report";
export { FAULTS, type FaultName, type SoakOptions } from "./run";
export { SOAK_SUBSCRIPTION } from "./world";

export interface SoakResult {
  seed: number;
  steps: number;
  realSeconds: number;
  simulatedMinutes: number;
  faults: FaultRow[];
  counters: Record<string, number>;
  violations: string[];
  /** The app's own error log lines (first 50): not violations by themselves, but worth a look. */
  appErrors: string[];
  /** Step log: what the PRNG chose, in order (replayable with the same seed). */
  plan: string[];
}

export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const say = opts.log ?? (() => undefined);
  const run = new SoakRun(opts);
  const world = await startWorld(run);
  const hosts = new Hosts(world, run);
  await hosts.current.services.ready();
  say(`world ready after ${((Date.now() - run.startedAt) / 1000).toFixed(1)} s; chaos for ${opts.minutes} min`);
  const delivery = new Delivery(world, run, hosts);
  delivery.start(world, hosts);
  hosts.startReviving();

  const steps = await runChaos(world, run, hosts, delivery);
  say(`chaos over after ${steps} steps, ${((Date.now() - run.startedAt) / 1000).toFixed(1)} s; quiescing`);
  const converged = await quiesce(world, run, delivery);
  await Promise.all([delivery.stop(), hosts.stop()]);

  const badTargets = await checkInvariants(world, run, hosts, delivery, converged);
  const faults = faultRows(run, badTargets);
  await world.stop();
  return {
    seed: opts.seed,
    steps,
    realSeconds: Math.round((Date.now() - run.startedAt) / 100) / 10,
    simulatedMinutes: Math.round((((Date.now() - run.startedAt) / 1000) * world.T) / 60),
    faults,
    counters: Object.fromEntries(Object.entries(run.counters).sort()),
    violations: run.violations,
    appErrors: run.appErrors,
    plan: run.plan,
  };
}
