import { QUEUE_DECLARER } from "../../src/core/declarations";
import { afterEach, describe, expect, it } from "vitest";
import { mapLimit } from "../../src/core/retryPolicy";
import { STUCK_PENDING_MS, TRANSIENT_FAILURES_TOLERATED } from "../../src/reconcile/reconcileStale";
import { statusReport } from "../../src/intake/statusReport";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { dropPool, instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

const declarePresent = {
  v: 1,
  kind: "declare",
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  state: "present",
};
const TTL_MS = 600_000;
const ref = scaleSetRef(DEMO.scaleSetId);

/** The demo scale set's declaration of the demo pool, stored directly as the queue's declarer would. */
const demoDeclaration = (state: "present" | "absent", requestId: string, at: number) => ({
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  ipConfiguration: "",
  state,
  requestId,
  declaredAt: new Date(at).toISOString(),
  declaredBy: QUEUE_DECLARER,
});

describe("reconcileStale: the timer's safety net", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  it("repairs, with events switched off, another writer's change that dropped our pool", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    h.sim.control.write(DEMO.scaleSetId, dropPool(DEMO.poolId)); // no event reaches poolsync
    h.sim.control.settle(); // the model write's operation ends first: an instance write meets it with 409
    h.sim.control.write(`${DEMO.scaleSetId}/virtualMachines/1`, dropPool(DEMO.poolId));
    h.sim.control.settle();
    clock.advance(TTL_MS + 1);

    const run = await h.services.reconcileStale();
    expect(run).toMatchObject({ driftFound: 1, enqueued: 1 });
    // The timer just stored fresh rows; the drift reconcile still reads ARM itself (fresh: true) rather than trust
    // cache rows that may claim otherwise.
    expect(h.logs.lines.find((l) => l.event === "enqueue")).toMatchObject({
      reason: "timer: observed differs from declared",
    });
    h.sim.control.resetStats();
    await h.drain();
    expect(h.sim.control.stats()).toMatchObject({ gets: 1, instanceLists: 1 });
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(DEMO.scaleSetId)!)).ipConfig0).toEqual([
      DEMO.poolId.toLowerCase(),
    ]);
    for (const vm of h.sim.control.instances(DEMO.scaleSetId))
      expect(poolsByIpConfig(instanceNics(vm)).ipConfig0).toEqual([DEMO.poolId.toLowerCase()]);
  });

  it("refreshes a scale set past the TTL with one GET when its ETag vouches for the cached instances; lists them when it does not", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    h.sim.control.settle();
    await h.services.reconcileStale(); // re-reads the model our instance writes made stale
    // The instance rows hold our writes' answers, read before CRP's bump of the scale set's ETag: nothing vouches
    // for them yet, so they are listed once, under the ETag just read; from then on that ETag vouches for them.
    clock.advance(TTL_MS + 1);
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 1, driftFound: 0, readsUsed: 2 });
    clock.advance(TTL_MS + 1);
    h.sim.control.resetStats();
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 1, driftFound: 0, readsUsed: 1 });
    expect(h.sim.control.stats()).toMatchObject({ gets: 1, instanceLists: 0, instanceGets: 0 });
    const partition = await h.services.cache.readPartition(scaleSetRef(DEMO.scaleSetId));
    expect([...partition.instances.values()].every((e) => e.readAt === clock.now())).toBe(true);

    // Someone writes an instance and no event reaches us: the scale set's ETag moves, so the instances are listed.
    h.sim.control.write(`${DEMO.scaleSetId}/virtualMachines/1`, dropPool(DEMO.poolId));
    h.sim.control.settle();
    clock.advance(TTL_MS + 1);
    h.sim.control.resetStats();
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 1, driftFound: 1, readsUsed: 2 });
    expect(h.sim.control.stats()).toMatchObject({ gets: 1, instanceLists: 1 });
  });

  it("never vouches for instance rows older than the ETag that would vouch: drift behind a lost event is found one TTL later", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    h.sim.control.settle();
    await h.services.reconcileStale(); // re-reads the model our instance writes made stale
    // Another writer drops our pool from an instance; its event is lost. CRP moves the scale set's ETag seconds later.
    h.sim.control.write(`${DEMO.scaleSetId}/virtualMachines/1`, dropPool(DEMO.poolId));
    h.sim.control.settle();
    // Then the scale set row (only it) is re-read, as after another writer's event about the scale set: its new
    // ETag already holds the instance's change, while the instance rows, still within the TTL, do not.
    await h.services.cache.markStale(ref, "event: another writer's change to the scale set");
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 1, driftFound: 0, readsUsed: 1 });

    // Past the TTL the ETag is unchanged, but it was read after those rows: it cannot vouch for them.
    clock.advance(TTL_MS + 1);
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 1, driftFound: 1, enqueued: 1, readsUsed: 2 });
    await h.drain();
    for (const vm of h.sim.control.instances(DEMO.scaleSetId))
      expect(poolsByIpConfig(instanceNics(vm)).ipConfig0).toEqual([DEMO.poolId.toLowerCase()]);
  });

  it("evicts a deleted scale set and shows its declarations as target deleted", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    h.sim.control.delete(DEMO.scaleSetId);
    h.sim.control.settle();
    clock.advance(TTL_MS + 1);

    const run = await h.services.reconcileStale();
    expect(run).toMatchObject({ visited: 1, evicted: 1, enqueued: 0 });
    const partition = await h.services.cache.readPartition(scaleSetRef(DEMO.scaleSetId));
    expect([partition.scaleSet, partition.instances.size]).toEqual([undefined, 0]);
    const [d] = await h.services.declarations.listForTarget(scaleSetRef(DEMO.scaleSetId));
    expect(d?.outcome).toMatchObject({ kind: "target-deleted" });
  });

  it("reads 50 stale entries of one resource group in one run by 5 LIST pages, not 50 GETs", async () => {
    const clock = manualClock();
    h = await startHarness({
      clock,
      cacheEnabled: true,
      // Pages of 10 (ARM's are 100 here by default): five pages from 50 rows instead of 500, the same paging.
      sim: { seed: wideWorld({ scaleSets: 50, capacity: 0, pools: 1 }), listPageSize: 10 },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_RECONCILE_MAX_READS: "20" },
    });
    const refs = Array.from({ length: 50 }, (_, i) => scaleSetRef(scaleSetId(WIDE_SUBSCRIPTION, "wide", `vmss-${i}`)));
    const pool = poolId(WIDE_SUBSCRIPTION, "wide", "lb", "pool-0");
    // Seeded concurrently: the machine is shared, and 150 sequential Table calls would dominate the test.
    await mapLimit(
      refs.map((ref, i) => ({ ref, i })),
      16,
      async ({ ref, i }) => {
        await h.services.declarations.upsert(ref, {
          scaleSetId: ref.id,
          backendPoolId: pool,
          ipConfiguration: "",
          state: "present",
          declaredAt: new Date(clock.now()).toISOString(),
          requestId: "seed",
          declaredBy: QUEUE_DECLARER,
        });
        await h.services.cache.markStale(ref, `test: stale #${i}`);
      },
    );
    clock.advance(1_000);
    h.sim.control.resetStats();

    const summary = await h.services.reconcileStale();
    expect(summary).toMatchObject({ readsUsed: 5, listPages: 5, scaleSetGets: 0, refreshed: 50 });
    expect(h.sim.control.stats()).toMatchObject({ lists: 5, gets: 0 });
    const stillStale = await h.services.cache.listRefreshCandidates(clock.now() - TTL_MS);
    expect(stillStale).toEqual([]);
  }, 180_000);

  it("ends a run at the first 429 and does not read again before Retry-After has passed", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    clock.advance(TTL_MS + 1);
    h.sim.control.injectFault({
      method: "GET",
      path: "virtualMachineScaleSets/etag-k8s-mp-0$",
      retryAfterSeconds: 120,
    });
    h.sim.control.resetStats();

    expect(await h.services.reconcileStale()).toMatchObject({ throttledUntil: clock.now() + 120_000, readsUsed: 1 });
    clock.advance(60_000);
    expect(await h.services.reconcileStale()).toMatchObject({ skippedUntil: expect.any(Number), readsUsed: 0 });
    clock.advance(60_001);
    expect(await h.services.reconcileStale()).toMatchObject({ readsUsed: 2, driftFound: 0 });
    expect(h.sim.control.stats()).toMatchObject({ gets: 2, status429: 1 });
  });

  /**
   * One scale set in each of `n` subscriptions (each read by a GET of its own), declared and applied, every row past
   * the TTL; the first subscription's rows are the oldest, so its visit comes first.
   */
  async function subscriptionsWorld(clock: ReturnType<typeof manualClock>, n = 2) {
    const subs = [
      WIDE_SUBSCRIPTION,
      "33333333-4444-5555-6666-777777777777",
      "44444444-5555-6666-7777-888888888888",
    ].slice(0, n);
    const vmss = subs.map((sub) => scaleSetId(sub, "wide", "vmss-0"));
    const pools = subs.map((sub) => poolId(sub, "wide", "lb", "pool-0"));
    h = await startHarness({
      clock,
      cacheEnabled: true,
      sim: {
        seed: {
          subscriptions: subs.flatMap(
            (subscription) => wideWorld({ subscription, scaleSets: 1, capacity: 2, pools: 1 }).subscriptions,
          ),
        },
      },
      env: { POOLSYNC_SCOPES: subs.map((sub) => `/subscriptions/${sub}`).join(",") },
    });
    for (const i of subs.keys()) {
      await h.send({ v: 1, kind: "declare", scaleSetId: vmss[i], backendPoolId: pools[i], state: "present" });
      await h.drainUntilEmpty(30_000);
      h.sim.control.settle();
      clock.advance(1_000);
    }
    clock.advance(TTL_MS + 1);
    /** The subscriptions of the scale sets whose rows are still due. */
    const due = async () =>
      (await h.services.cache.listRefreshCandidates(clock.now() - TTL_MS)).map((c) => c.scaleSetId.split("/")[2]);
    return { subs, due };
  }

  it("pauses only the throttled subscription: the run goes on with the others, and the next skips it until Retry-After", async () => {
    // CRP's windows and ARM's read bucket are each subscription's own: a 429 in one says nothing of another's.
    const clock = manualClock();
    const { subs, due } = await subscriptionsWorld(clock);
    const [throttledSub] = subs;
    h.sim.control.injectFault({
      method: "GET",
      path: `${throttledSub}/resourceGroups/wide/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-0$`,
      retryAfterSeconds: 120,
    });
    h.sim.control.resetStats();

    const first = await h.services.reconcileStale();
    expect(first).toMatchObject({ throttledUntil: clock.now() + 120_000, visited: 2 });
    // The other subscription's scale set was read in the same run; only the throttled one is still due.
    expect(new Set(await due())).toEqual(new Set([throttledSub]));
    // GET /api/status names the paused subscription and until when.
    const report = await statusReport({ ...h.services, now: clock.now, cacheTtlMs: TTL_MS });
    expect(report.timer?.paused).toEqual([
      { subscriptionId: throttledSub, until: new Date(clock.now() + 120_000).toISOString() },
    ]);

    clock.advance(60_000);
    h.sim.control.resetStats();
    expect(await h.services.reconcileStale()).toMatchObject({ skippedUntil: expect.any(Number), readsUsed: 0 });
    expect(h.sim.control.stats()).toMatchObject({ gets: 0, status429: 0 });

    clock.advance(60_001);
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 1, driftFound: 0 });
    expect(h.sim.control.stats()).toMatchObject({ status429: 0 });
    expect(await due()).toEqual([]);
  });

  it("goes on past a scale set whose read failed for a while (a 503), and reads it again the next run", async () => {
    const clock = manualClock();
    const { subs, due } = await subscriptionsWorld(clock);
    h.sim.control.injectFault({
      method: "GET",
      path: `${subs[0]}/resourceGroups/wide/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-0$`,
      status: 503,
    });
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 2, failedVisits: 1 });
    expect(new Set(await due())).toEqual(new Set([subs[0]]));
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 1, failedVisits: 0 });
    expect(await due()).toEqual([]);
  });

  it("ends the run, as a failed run, at one transient failure more than it goes on past", async () => {
    const clock = manualClock();
    const { subs } = await subscriptionsWorld(clock, TRANSIENT_FAILURES_TOLERATED + 1);
    h.sim.control.injectFault({ method: "GET", path: "virtualMachineScaleSets/vmss-0$", status: 503, times: 99 });
    h.sim.control.resetStats();
    await expect(h.services.reconcileStale()).rejects.toThrow(/503 ServiceUnavailable/);
    expect(h.sim.control.stats()).toMatchObject({ gets: subs.length });
  });

  it("re-enqueues failed declarations when their retry time has come, and removes absents applied everywhere", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send({ ...declarePresent, ipConfiguration: "no-such-ipconfig" });
    await h.drain();
    const ref = scaleSetRef(DEMO.scaleSetId);
    expect((await h.services.declarations.listForTarget(ref))[0]?.outcome.kind).toBe("failed");
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 0 });
    clock.advance(h.config.failedRetryMs + 1);
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 1 });
    await h.drain();

    await h.send({ ...declarePresent, state: "absent", ipConfiguration: "no-such-ipconfig" });
    await h.send({ ...declarePresent, state: "absent" });
    await h.drain();
    const run = await h.services.reconcileStale();
    expect(run.removedDeclarations).toBe(1); // the one gone from model and instances; the failed one stays visible
    expect((await h.services.declarations.listForTarget(ref)).map((d) => [d.ipConfiguration, d.outcome.kind])).toEqual([
      ["no-such-ipconfig", "failed"],
    ]);
    // Its removal mark stays a week (a late redelivery of that absent must not come back), yet declaring the pool
    // again creates a declaration: nothing was there to update.
    const again = demoDeclaration("present", "again-1", clock.now() + 1_000);
    expect((await h.services.declarations.upsert(ref, again)).result).toBe("created");
  });

  it("asks again, without an ARM read, for a declaration whose reconcile was lost (pending for 10 minutes)", async () => {
    const clock = manualClock();
    // The cache's rows stay fresh throughout, so nothing else gives the timer a reason to read.
    h = await startHarness({ clock, cacheEnabled: true, env: { POOLSYNC_CACHE_TTL_SECONDS: "3600" } });
    await h.send(declarePresent);
    await h.drain();
    await h.services.reconcileStale(); // re-reads the scale set our instance writes made stale
    // A later "absent" is stored, but the message that should have reconciled it is gone (say, poisoned after
    // its window opened).
    const ref = scaleSetRef(DEMO.scaleSetId);
    const stored = demoDeclaration("absent", "lost-1", Date.now() + 60_000);
    expect((await h.services.declarations.upsert(ref, stored)).result).toBe("updated");
    clock.advance(STUCK_PENDING_MS - 1);
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 0 });
    clock.advance(2);
    h.sim.control.resetStats();
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 1, readsUsed: 0 });
    expect(h.sim.control.stats().requests).toBe(0);
    expect(h.logs.lines.filter((l) => l.event === "enqueue").at(-1)).toMatchObject({
      kind: "reconcile",
      reason: expect.stringMatching(/^timer: declaration pending since /),
    });
    await h.drain();
    const d = (await h.services.declarations.listForTarget(ref)).find((x) => x.requestId === "lost-1");
    expect(d?.outcome.kind).toBe("applied");
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(DEMO.scaleSetId)!)).ipConfig0 ?? []).toEqual([]);
  });

  it("evicts the cache rows of scale sets nobody declares for once nobody touched them for a day, without reading ARM", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    const ref = scaleSetRef(DEMO.scaleSetId);
    await h.services.cache.storeScaleSet(ref, await h.services.compute.getScaleSet(ref), undefined);
    h.sim.control.resetStats();
    clock.advance(h.config.idleEvictMs - 1_000);
    expect(await h.services.reconcileStale()).toMatchObject({ evicted: 0, readsUsed: 0 });
    clock.advance(2_000);
    expect(await h.services.reconcileStale()).toMatchObject({ evicted: 1, readsUsed: 0 });
    expect((await h.services.cache.readPartition(ref)).scaleSet).toBeUndefined();
    expect(h.sim.control.stats().requests).toBe(0);
  });
});
