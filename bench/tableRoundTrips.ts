// Table round trips of poolsync's hot path on the one-partition-per-target layout (issue 41's targets): a warm leading
// declaration, a burst of four on one target, another writer's ARM event, and which partitions a wide burst writes.
// Counted by the benchmark's storage policy on every Table client (a batch transaction is one round trip), on Azurite.
import { startPoolsync, type PoolsyncRun } from "./poolsyncRun";
import { percentile, prng } from "./stats";
import { buildWorld, startSim, type Change } from "./world";
import type { ArmSimulator } from "../sim";

export interface TableRoundTrips {
  samples: number;
  /** Medians over `samples` targets, each measured from its first request to quiet (events included). */
  warmLeading: number;
  /** The same on a host that wrote nothing for longer than a write reservation lasts (10 s): it reserves first. */
  warmLeadingQuietHost: number;
  burstOfFour: number;
  /** The event handler's own round trips (its read and its transaction). */
  foreignEvent: number;
  /** The pass the event wakes (the target has declarations, and the event has no body: ARM is read for drift). */
  foreignEventPass: number;
  /** The wide burst: its writes (non-GET requests) per partition. */
  wideBurst: {
    scaleSets: number;
    perScaleSet: number;
    writes: number;
    partitions: number;
    largestShare: number;
    largestIs: string;
  };
}

const WINDOW_MS = 2_000;
const EVENT_DELAY_MS = 500;
/** How long a host holds the subscription's write tokens it reserved (SharedWriteBudget's default). */
const RESERVATION_HOLD_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runTableRoundTrips(storage: string, samples: number, seed: number): Promise<TableRoundTrips> {
  const perScaleSet = 5;
  const wideScaleSets = 20;
  const world = buildWorld({
    subscriptions: 1,
    scaleSetsPerSubscription: Math.max(3 * samples, wideScaleSets),
    capacity: 3,
    pools: perScaleSet,
  });
  // ARM without latency or throttling: what is counted here is storage, and no ARM wait should stretch a window.
  const sim: ArmSimulator = await startSim(
    { timeScale: 1, latency: { fixedMs: 0, jitterMs: 0 }, operationDurationMs: 0 },
    world.seed,
    seed,
    { throttling: false },
  );
  const run: PoolsyncRun = await startPoolsync(sim, {
    storage,
    subscriptions: world.subscriptions,
    events: true,
    eventDelayMs: EVENT_DELAY_MS,
    timerEveryMs: 24 * 3_600_000,
    random: prng(seed),
    env: { POOLSYNC_DECLARE_WINDOW_SECONDS: String(WINDOW_MS / 1000) },
  });
  const counter = run.tables;
  const pools = world.pools[0] as string[];
  let id = 0;
  const change = (ss: string, pool: string): Change => ({ id: id++, scaleSetId: ss, poolId: pool, state: "present" });
  /** Round trips (and those of event handling) from the first submit until poolsync and its events are quiet again. */
  const measureBoth = async (submit: () => Promise<void>): Promise<{ all: number; events: number }> => {
    counter.reset();
    await submit();
    await run.idle();
    await sleep(EVENT_DELAY_MS + 500);
    await run.idle();
    return { all: counter.ops, events: counter.eventOps };
  };
  const measure = async (submit: () => Promise<void>) => (await measureBoth(submit)).all;
  try {
    const warm: number[] = [];
    const warmQuiet: number[] = [];
    const burst: number[] = [];
    const foreign: number[] = [];
    const foreignPass: number[] = [];
    for (let i = 0; i < samples; i++) {
      const [a, b, c] = [world.scaleSets[3 * i]!, world.scaleSets[3 * i + 1]!, world.scaleSets[3 * i + 2]!];
      // Warm: a first pool, then quiet for twice the window, then the measured second one leads.
      await run.submit(change(a, pools[0]!));
      await run.idle();
      await sleep(2 * WINDOW_MS + 500);
      warm.push(await measure(() => run.submit(change(a, pools[1]!))));
      await sleep(RESERVATION_HOLD_MS + 1_000);
      warmQuiet.push(await measure(() => run.submit(change(a, pools[2]!))));
      // A burst of four on a warm target.
      await run.submit(change(b, pools[0]!));
      await run.idle();
      await sleep(2 * WINDOW_MS + 500);
      burst.push(
        await measure(async () => {
          await Promise.all(pools.slice(1, 5).map((p) => run.submit(change(b, p))));
        }),
      );
      // Another writer tags a scale set poolsync has in its cache: the event's work only.
      await run.submit(change(c, pools[0]!));
      await run.idle();
      await sleep(EVENT_DELAY_MS + 500);
      await run.idle();
      const seen = await measureBoth(async () => {
        sim.control.write(c, (r) => {
          r["tags"] = { ...((r["tags"] as object | undefined) ?? {}), team: `t${i}` };
        });
        await sleep(EVENT_DELAY_MS + 200);
      });
      foreign.push(seen.events);
      foreignPass.push(seen.all - seen.events);
    }
    // The wide burst: every pool on every scale set at once, from a cold start of those targets.
    const wide = world.scaleSets.slice(0, wideScaleSets);
    counter.reset();
    await Promise.all(wide.flatMap((ss) => pools.map((p) => run.submit(change(ss, p)))));
    await run.idle();
    await sleep(EVENT_DELAY_MS + 500);
    await run.idle();
    const writes = [...counter.partitionWrites.values()];
    const largest = [...counter.partitionWrites].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "";
    const total = writes.reduce((s, n) => s + n, 0);
    return {
      samples,
      warmLeading: percentile(warm, 50),
      warmLeadingQuietHost: percentile(warmQuiet, 50),
      burstOfFour: percentile(burst, 50),
      foreignEvent: percentile(foreign, 50),
      foreignEventPass: percentile(foreignPass, 50),
      wideBurst: {
        scaleSets: wideScaleSets,
        perScaleSet,
        writes: total,
        partitions: writes.length,
        largestShare: total === 0 ? 0 : Math.max(...writes) / total,
        // A shared partition by its name; a target's by what it is (its key is a resource ID).
        largestIs: largest.startsWith("~") ? largest : "a target's partition",
      },
    };
  } finally {
    await run.close().catch(() => undefined);
    await sim.stop();
  }
}
