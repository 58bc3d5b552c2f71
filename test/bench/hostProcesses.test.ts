import { expect, it } from "vitest";
import { startPoolsyncProcesses } from "../../bench/poolsyncProcesses";
import { prng } from "../../bench/stats";
import { buildWorld, observed, OtherWriters, satisfied, startSim, type Change } from "../../bench/world";
import { testStorageConnectionString } from "../../devkit/storage";

/**
 * The benchmark's instances as three OS processes over one Azurite queue and tables and one simulator, as Flex
 * Consumption runs them; one is SIGKILLed while it holds messages in the middle of a burst, while other writers keep
 * editing ip configurations of their own on the same models and instances. The dead instance's messages come back when
 * their lease runs out and the two others finish them: every declaration holds as declared on every model and
 * instance, and no other writer's change is lost.
 */

const PROFILE = { latency: { fixedMs: 20, jitterMs: 30 }, operationDurationMs: 1_000 };

it("three instances in three processes, one SIGKILLed mid-burst: every declaration applied as declared, no other writer's ip configuration lost", async () => {
  const world = buildWorld({ subscriptions: 1, scaleSetsPerSubscription: 4, capacity: 2, pools: 4 });
  const sim = await startSim({ ...PROFILE, timeScale: 1 }, world.seed, 42);
  const targets = world.scaleSets.flatMap((ss) => [ss, ...sim.control.instances(ss).map((vm) => String(vm.id))]);
  const wrand = prng(43);
  const writers = new OtherWriters(sim, world, () => targets[Math.floor(wrand() * targets.length)] as string, wrand);
  const run = await startPoolsyncProcesses(sim, {
    storage: testStorageConnectionString(),
    subscriptions: world.subscriptions,
    events: true,
    eventDelayMs: 200,
    timerEveryMs: 0,
    random: prng(42),
    hosts: 3,
    // A short lease on the messages (renewed at half-time while they run) and on a pass's target, so that what the
    // dead instance held comes back within seconds rather than minutes.
    // Two starting at a time: the third is forked when one of the first two is ready.
    processes: { killAtMs: [1_500], leaseSeconds: 6, start: { maxStarting: 2 } },
    env: { POOLSYNC_RECONCILE_LEASE_SECONDS: "15", POOLSYNC_ARM_TIMEOUT_SECONDS: "5" },
  });
  try {
    const pids = run.hosts.all.map((h) => h.pid);
    expect(new Set([process.pid, ...pids]).size).toBe(4);
    const starting = (at: number) => run.hosts.all.filter((h) => h.forkedAt <= at && at < (h.readyAt ?? Infinity));
    expect(Math.max(...run.hosts.all.map((h) => starting(h.forkedAt).length))).toBe(2);
    writers.start(3, 500);
    const changes: Change[] = [];
    for (const ss of world.scaleSets)
      for (const pool of world.pools[0] as string[])
        changes.push({ id: changes.length, scaleSetId: ss, poolId: pool, state: "present" });
    await Promise.all(changes.map((c) => run.submit(c)));

    const deadline = Date.now() + 150_000;
    while (changes.some((c) => !satisfied(sim, c)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    await writers.stop();
    await run.idle();
    sim.control.settle();

    // The kill landed on an instance that held messages, and only it died.
    const f = run.figures();
    expect(f.hostsKilled).toBe(1);
    expect(f.killedHeld).toBeGreaterThanOrEqual(1);
    expect(run.hosts.alive).toHaveLength(2);
    // Exactly as declared: the four pools on ipConfig0 of every model and every instance, nothing else.
    const want = (world.pools[0] as string[]).map((p) => p.toLowerCase()).sort();
    for (const ss of world.scaleSets) {
      const seen = observed(sim, ss);
      expect([...seen.model].sort(), ss).toEqual(want);
      for (const i of seen.instances) expect([...i].sort(), ss).toEqual(want);
    }
    const theirs = writers.lostUpdates();
    expect(theirs.ops).toBeGreaterThan(0);
    expect(theirs.lost).toBe(0);
    expect(sim.control.stats().status429).toBe(0);
    // The instances share one POOLSYNC_CACHE_KEY, as an app's hosts do: each reads the rows the others stored.
    expect(run.logs.counts["warn:storage.row-unusable"] ?? 0).toBe(0);
  } finally {
    await writers.stop();
    await run.close();
    await sim.stop();
  }
}, 200_000);
