import { afterEach, describe, expect, it } from "vitest";
import { dropPool, instanceNics, poolsByIpConfig } from "../../sim/wire";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { mapLimit } from "../../src/core/retryPolicy";
import { statusReport } from "../../src/intake/statusReport";
import { SETTLE_MS } from "../../src/reconcile/groupRead";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { StoreTargetPasses } from "../../src/azure/targets/targetPasses";
import { groupsWorld, groupsWorldIds, poolId, WIDE_SUBSCRIPTION } from "../../devkit/worlds";

/**
 * The timer reads the models of several scale sets of one resource group with one LIST of the group (paged, on the
 * read budget counted in requests), stores each conditionally on its row's Table ETag read before the LIST, and
 * falls back to GET for a lone scale set and for one the LIST does not show; a reconcile that must read its model
 * while others of its group are due does the same. Azurite, the simulator, the real SDK.
 */
const TTL_MS = 600_000;
const SUB = WIDE_SUBSCRIPTION;

const ids = groupsWorldIds;
const poolOf = (id: string) => poolId(SUB, scaleSetRef(id).resourceGroup, "lb", "pool-0");

describe("reconcileStale: revalidation by LIST of the resource group", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  async function declareAndApply(perGroup: number[], capacity: number, env: Record<string, string> = {}) {
    const clock = manualClock();
    h = await startHarness({
      clock,
      cacheEnabled: true,
      sim: { seed: groupsWorld(perGroup, capacity) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${SUB}`, ...env },
    });
    for (const id of ids(perGroup))
      await h.send({ v: 1, kind: "declare", scaleSetId: id, backendPoolId: poolOf(id), state: "present" });
    await h.drainUntilEmpty(60_000);
    h.sim.control.settle(); // CRP's ETag bumps after our instance writes
    return clock;
  }

  it("sweeps expired scale sets with one LIST page per group and a GET for the lone one; the ETag vouches for the instances", async () => {
    const perGroup = [4, 3, 2, 1];
    const clock = await declareAndApply(perGroup, 1);
    clock.advance(TTL_MS + 1);
    await h.services.reconcileStale(); // re-reads the models our instance writes made stale (and the rest, expired)
    clock.advance(TTL_MS + 1);
    h.sim.control.resetStats();

    const run = await h.services.reconcileStale();
    expect(run).toMatchObject({
      visited: 10,
      driftFound: 0,
      listPages: 3,
      scaleSetGets: 1,
      instanceLists: 0,
      readsUsed: 4,
    });
    expect(h.sim.control.stats()).toMatchObject({ lists: 3, gets: 1, instanceLists: 0, instanceGets: 0 });
    for (const id of ids(perGroup)) {
      const p = await h.services.cache.readPartition(scaleSetRef(id));
      expect(p.scaleSet).toMatchObject({ readAt: clock.now(), stale: false });
      expect([...p.instances.values()].every((e) => e.readAt === clock.now())).toBe(true);
    }
    // GET /api/status shows what the last run spent its requests on.
    const s = h.services;
    const report = await statusReport({ ...s, now: clock.now, cacheTtlMs: TTL_MS });
    expect(report.timer?.lastRun).toMatchObject({
      listPages: 3,
      scaleSetGets: 1,
      instanceLists: 0,
      visited: 10,
      at: clock.now(),
    });
  }, 120_000);

  it("finds drift no event announced through the LIST, and lists the instances of that scale set only", async () => {
    const perGroup = [3];
    const clock = await declareAndApply(perGroup, 1);
    clock.advance(TTL_MS + 1);
    await h.services.reconcileStale();
    const victim = ids(perGroup)[1]!;
    h.sim.control.write(`${victim}/virtualMachines/0`, dropPool(poolOf(victim))); // no event reaches poolsync
    h.sim.control.settle();
    clock.advance(TTL_MS + 1);
    h.sim.control.resetStats();

    expect(await h.services.reconcileStale()).toMatchObject({
      visited: 3,
      driftFound: 1,
      enqueued: 1,
      listPages: 1,
      scaleSetGets: 0,
      instanceLists: 1,
    });
    expect(h.sim.control.stats(victim)).toMatchObject({ instanceLists: 1 });
    await h.drainUntilEmpty(30_000);
    for (const vm of h.sim.control.instances(victim))
      expect(poolsByIpConfig(instanceNics(vm)).ipConfig0).toEqual([poolOf(victim).toLowerCase()]);
  }, 120_000);

  it("counts the budget in pages: a group of 50 stale rows over 5 pages of 10, 2 pages a run, resumed where the last run stopped", async () => {
    const clock = manualClock();
    h = await startHarness({
      clock,
      cacheEnabled: true,
      // Pages of 10 (ARM's are 100 here by default) give five pages from 50 rows instead of 500: the same paging.
      sim: { seed: groupsWorld([50], 0), listPageSize: 10 },
      env: { POOLSYNC_SCOPES: `/subscriptions/${SUB}`, POOLSYNC_RECONCILE_MAX_READS: "2" },
    });
    const refs = ids([50]).map(scaleSetRef);
    await mapLimit(refs, 16, async (ref) => {
      await h.services.declarations.upsert(ref, {
        scaleSetId: ref.id,
        backendPoolId: poolOf(ref.id),
        ipConfiguration: "",
        state: "present",
        declaredAt: new Date(clock.now()).toISOString(),
        requestId: "seed",
        declaredBy: QUEUE_DECLARER,
      });
      await h.services.cache.markStale(ref, "test: stale");
    });
    clock.advance(1_000);
    h.sim.control.resetStats();

    const pages: number[] = [];
    const refreshed: number[] = [];
    for (let run = 0; run < 3; run++) {
      const before = h.sim.control.stats().lists;
      const summary = await h.services.reconcileStale();
      pages.push(h.sim.control.stats().lists - before);
      refreshed.push(summary.refreshed);
      expect(summary.readsUsed).toBe(pages.at(-1));
    }
    // No page read twice: the third run starts at the fifth page, and nothing is left.
    expect(pages).toEqual([2, 2, 1]);
    expect(refreshed).toEqual([20, 20, 10]);
    expect(h.sim.control.stats()).toMatchObject({ gets: 0 });
    expect(await h.services.cache.listRefreshCandidates(clock.now() - TTL_MS)).toEqual([]);
  }, 180_000);

  it("never overwrites an invalidation that came while the LIST was in flight", async () => {
    const perGroup = [3];
    const clock = await declareAndApply(perGroup, 1);
    clock.advance(TTL_MS + 1);
    await h.services.reconcileStale();
    clock.advance(TTL_MS + 1);
    const target = scaleSetRef(ids(perGroup)[2]!);
    h.sim.control.resetStats();
    // The LIST's answer takes a second; as soon as it has reached ARM, an event's invalidation lands.
    h.sim.control.injectFault({ method: "GET", path: "virtualMachineScaleSets$", delayMs: 1_000, times: 1 });
    const running = h.services.reconcileStale();
    while (h.sim.control.stats().lists === 0) await new Promise((r) => setTimeout(r, 5));
    await h.services.cache.markStale(target, "test: event during the LIST");
    const run = await running;

    expect(run).toMatchObject({ listPages: 1, scaleSetGets: 0 });
    const hit = await h.services.cache.readPartition(target);
    expect(hit.scaleSet).toMatchObject({ stale: true, staleReason: "test: event during the LIST" });
    for (const id of ids(perGroup).slice(0, 2))
      expect((await h.services.cache.readPartition(scaleSetRef(id))).scaleSet).toMatchObject({
        stale: false,
        readAt: clock.now(),
      });
  }, 120_000);

  it("falls back to a GET for a scale set the LIST no longer shows: its 404 evicts it and records its target deleted", async () => {
    const perGroup = [3];
    const clock = await declareAndApply(perGroup, 1);
    clock.advance(TTL_MS + 1);
    await h.services.reconcileStale();
    const gone = scaleSetRef(ids(perGroup)[0]!);
    h.sim.control.delete(gone.id);
    h.sim.control.settle();
    clock.advance(TTL_MS + 1);
    h.sim.control.resetStats();

    expect(await h.services.reconcileStale()).toMatchObject({
      listPages: 1,
      notListed: 1,
      scaleSetGets: 1,
      evicted: 1,
    });
    const p = await h.services.cache.readPartition(gone);
    expect([p.scaleSet, p.instances.size]).toEqual([undefined, 0]);
    const [d] = await h.services.declarations.listForTarget(gone);
    expect(d?.outcome).toMatchObject({ kind: "target-deleted" });
  }, 120_000);

  it("starts cold from the LIST: the models of a group's uncached declared scale sets by one page, one VM LIST each", async () => {
    const clock = manualClock();
    h = await startHarness({
      clock,
      cacheEnabled: true,
      sim: { seed: groupsWorld([5], 2) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${SUB}` },
    });
    for (const ref of ids([5]).map(scaleSetRef))
      await h.services.declarations.upsert(ref, {
        scaleSetId: ref.id,
        backendPoolId: poolOf(ref.id),
        ipConfiguration: "",
        state: "present",
        declaredAt: new Date(clock.now()).toISOString(),
        requestId: "seed",
        declaredBy: QUEUE_DECLARER,
      });
    h.sim.control.resetStats();

    // Declared but not applied in ARM: the timer sees the drift of each, from one page and a VM LIST each.
    expect(await h.services.reconcileStale()).toMatchObject({
      visited: 5,
      listPages: 1,
      scaleSetGets: 0,
      instanceLists: 5,
      driftFound: 5,
    });
    expect(h.sim.control.stats()).toMatchObject({ lists: 1, gets: 0, instanceLists: 5 });
    expect((await h.services.cache.listCachedScaleSets()).size).toBe(5);
  }, 60_000);

  it("a reconcile whose model is due reads its group by one LIST when others there are due too, and refreshes them untouched", async () => {
    const perGroup = [4];
    const clock = await declareAndApply(perGroup, 1);
    clock.advance(TTL_MS + 1);
    const [first, ...others] = ids(perGroup).map(scaleSetRef);
    const touchedBefore = new Map(
      (await h.services.cache.listRefreshCandidates(clock.now() + 1)).map((c) => [
        `${c.scaleSetId}|${c.instanceId}`,
        c.touchedAt,
      ]),
    );
    h.sim.control.resetStats();

    const report = await h.services.reconcile(first!, { reason: "test", attempt: 0 });
    expect(report).toMatchObject({ result: "unchanged", armWrites: 0 });
    // One page for the models; the instances are one VM LIST of its own, as always.
    expect(h.sim.control.stats()).toMatchObject({ lists: 1, gets: 0, instanceLists: 1 });
    expect(h.logs.lines.find((e) => e.event === "reconcile.groupList")).toMatchObject({
      pages: 1,
      due: 3,
      refreshed: 3,
      listedSelf: true,
    });
    for (const ref of others) {
      const row = (await h.services.cache.listRefreshCandidates(clock.now() + 1)).find(
        (c) => c.scaleSetId === ref.id && c.instanceId === undefined,
      );
      // Fresh now, but not touched: a neighbour's reads must not keep an undeclared scale set cached.
      expect((await h.services.cache.readPartition(ref)).scaleSet).toMatchObject({ stale: false, readAt: clock.now() });
      expect(row?.touchedAt).toBe(touchedBefore.get(`${ref.id}|undefined`));
    }

    // The neighbours' reconciles find their models fresh: no model read, only their instances' LIST.
    h.sim.control.resetStats();
    for (const ref of others) await h.services.reconcile(ref, { reason: "test", attempt: 0 });
    expect(h.sim.control.stats()).toMatchObject({ lists: 0, gets: 0, instanceLists: 3 });
  }, 120_000);

  it("a reconcile whose model alone is due reads it by GET, and an invalidation during its group's LIST wins", async () => {
    const perGroup = [3];
    const clock = await declareAndApply(perGroup, 1);
    clock.advance(TTL_MS + 1);
    await h.services.reconcileStale(); // every row fresh again
    const [first, second, third] = ids(perGroup).map(scaleSetRef);
    await h.services.cache.markStale(first!, "test: an event");
    h.sim.control.resetStats();
    await h.services.reconcile(first!, { reason: "test", attempt: 0 });
    expect(h.sim.control.stats()).toMatchObject({ lists: 0, gets: 1 });

    // All three due; the LIST's answer takes a second, and an event invalidates the third as soon as it reached ARM.
    clock.advance(TTL_MS + 1);
    h.sim.control.resetStats();
    h.sim.control.injectFault({ method: "GET", path: "virtualMachineScaleSets$", delayMs: 1_000, times: 1 });
    const running = h.services.reconcile(first!, { reason: "test", attempt: 0 });
    while (h.sim.control.stats().lists === 0) await new Promise((r) => setTimeout(r, 5));
    await h.services.cache.markStale(third!, "test: event during the LIST");
    await running;
    expect(h.sim.control.stats()).toMatchObject({ lists: 1, gets: 0 });
    expect((await h.services.cache.readPartition(third!)).scaleSet).toMatchObject({
      stale: true,
      staleReason: "test: event during the LIST",
    });
    expect((await h.services.cache.readPartition(second!)).scaleSet).toMatchObject({
      stale: false,
      readAt: clock.now(),
    });
  }, 120_000);

  it("a reconcile's group read leaves a neighbour that went stale moments ago: CRP's ETag bump may still be coming", async () => {
    const perGroup = [3];
    const clock = await declareAndApply(perGroup, 1);
    clock.advance(TTL_MS + 1);
    await h.services.reconcileStale(); // every row fresh again
    const [first, settled, recent] = ids(perGroup).map(scaleSetRef);
    await h.services.cache.markStale(settled!, "test: an instance write, long enough ago");
    clock.advance(SETTLE_MS);
    await h.services.cache.markStale(recent!, "test: an instance write just now");
    await h.services.cache.markStale(first!, "test: an event");
    h.sim.control.resetStats();

    await h.services.reconcile(first!, { reason: "test", attempt: 0 });
    expect(h.sim.control.stats()).toMatchObject({ lists: 1, gets: 0 });
    expect(h.logs.lines.find((e) => e.event === "reconcile.groupList")).toMatchObject({ due: 1, refreshed: 1 });
    expect((await h.services.cache.readPartition(settled!)).scaleSet).toMatchObject({
      stale: false,
      readAt: clock.now(),
    });
    expect((await h.services.cache.readPartition(recent!)).scaleSet).toMatchObject({
      stale: true,
      staleReason: "test: an instance write just now",
    });
  }, 120_000);

  it("a reconcile's group read leaves a neighbour whose pass holds its lease: that pass's write may be in flight", async () => {
    const perGroup = [4];
    const clock = await declareAndApply(perGroup, 1);
    clock.advance(TTL_MS + 1);
    const [first, held, ...idle] = ids(perGroup).map(scaleSetRef);
    const readBefore = (await h.services.cache.readPartition(held!)).scaleSet?.readAt;
    const passes = new StoreTargetPasses(h.services.store);
    const take = await passes.acquire(held!, "another-host", 60_000, false, false);
    expect(take.kind).toBe("acquired");
    h.sim.control.resetStats();

    await h.services.reconcile(first!, { reason: "test", attempt: 0 });
    expect(h.logs.lines.find((e) => e.event === "reconcile.groupList")).toMatchObject({ due: 2, refreshed: 2 });
    expect((await h.services.cache.readPartition(held!)).scaleSet?.readAt).toBe(readBefore);
    for (const ref of idle)
      expect((await h.services.cache.readPartition(ref)).scaleSet).toMatchObject({ readAt: clock.now() });
  }, 120_000);
});
