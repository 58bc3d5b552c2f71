import { expect, it } from "vitest";
import { runBurst } from "../../bench/workloads";
import { startPoolsync } from "../../bench/poolsyncRun";
import { prng } from "../../bench/stats";
import { buildWorld, startSim } from "../../bench/world";
import { testStorageConnectionString } from "../../devkit/storage";

/**
 * A workload leaves nothing running when it ends: the next one in the same process (and the overhead section's CPU
 * figure, which counts the whole process) must not pay for its timers, intervals, sockets or listeners.
 */

const PROFILE = { latency: { fixedMs: 10, jitterMs: 10 }, operationDurationMs: 200 };
/** What keeps the event loop alive, by kind (Timeout, TCPSocketWrap, ...); vitest's own are there before and after. */
const active = () => {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
};

it("a small burst through poolsync, then nothing of it keeps running (timers, sockets, child processes)", async () => {
  const env = { storage: testStorageConnectionString(), profile: PROFILE, log: () => undefined };
  // Warm once so the clients' lazily created, process-wide handles (keep-alive agents) exist before the count.
  await runBurst("poolsync", env, { scaleSets: 2, capacity: 2, perScaleSet: 2, timeScale: 1, poolsyncTimeScale: 1 }, 7);
  await new Promise((r) => setTimeout(r, 2_000));
  const before = active();

  const res = await runBurst(
    "poolsync",
    env,
    { scaleSets: 3, capacity: 2, perScaleSet: 3, timeScale: 1, poolsyncTimeScale: 1 },
    8,
  );
  expect(res.converged).toBe(res.changes);
  // Sockets closing and the last poll's timer need a moment; anything still there after that is a leak.
  await new Promise((r) => setTimeout(r, 2_000));
  const after = active();
  for (const kind of new Set([...Object.keys(before), ...Object.keys(after)])) {
    expect(
      after[kind] ?? 0,
      `${kind}: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`,
    ).toBeLessThanOrEqual(before[kind] ?? 0);
  }
}, 120_000);

it("a workload closed while its passes still run (as a run that did not converge is): nothing of it keeps running", async () => {
  const before = active();
  const world = buildWorld({ subscriptions: 1, scaleSetsPerSubscription: 4, capacity: 3, pools: 3 });
  const sim = await startSim({ ...PROFILE, operationDurationMs: 3_000, timeScale: 1 }, world.seed, 9);
  const run = await startPoolsync(sim, {
    storage: testStorageConnectionString(),
    subscriptions: world.subscriptions,
    events: true,
    eventDelayMs: 100,
    timerEveryMs: 60_000,
    random: prng(9),
  });
  let id = 0;
  for (const ss of world.scaleSets)
    for (const pool of world.pools[0] as string[])
      await run.submit({ id: id++, scaleSetId: ss, poolId: pool, state: "present" });
  // Passes are running (operations of 3 s): close the run and stop the simulator under them.
  await new Promise((r) => setTimeout(r, 2_000));
  await run.close();
  await sim.stop();
  await new Promise((r) => setTimeout(r, 3_000));
  const after = active();
  for (const kind of new Set([...Object.keys(before), ...Object.keys(after)])) {
    expect(
      after[kind] ?? 0,
      `${kind}: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`,
    ).toBeLessThanOrEqual(before[kind] ?? 0);
  }
}, 120_000);
