import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { groupsWorld, groupsWorldIds } from "../../devkit/worlds";
import { readThroughGroup, SETTLE_MS } from "../../src/reconcile/groupRead";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * A pass that must read its model reads its resource group by LIST instead, when cached neighbours are due too:
 * the real SDK against the simulator, the cache on Azurite, on a clock the test moves.
 */
describe("readThroughGroup", () => {
  const PER_GROUP = [4];
  const refs = groupsWorldIds(PER_GROUP).map(scaleSetRef);
  const [self, ...neighbours] = refs as [ReturnType<typeof scaleSetRef>, ...ReturnType<typeof scaleSetRef>[]];
  const clock = manualClock();
  let h: Harness;
  const deps = () => ({ cache: h.services.cache, clock, log: h.logs, config: h.config });
  const lists = () => h.sim.control.stats().lists;

  beforeAll(async () => {
    h = await startHarness({ clock, cacheEnabled: true, sim: { seed: groupsWorld(PER_GROUP, 1) } });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    for (const ref of refs)
      await h.services.cache.storeScaleSet(
        ref,
        await h.services.compute.getScaleSet(ref),
        (await h.services.cache.readEntry(ref))?.rowEtag,
      );
    h.sim.control.resetStats();
    h.logs.lines.length = 0;
  });

  it("one LIST answers the pass and refreshes the neighbours past their TTL", async () => {
    clock.advance(h.config.cacheTtlMs);
    const model = await readThroughGroup(self, h.services.compute, deps());
    expect(model?.id.toLowerCase()).toBe(self.id.toLowerCase());
    expect(lists()).toBe(1);
    for (const ref of neighbours) expect((await h.services.cache.readEntry(ref))?.readAt).toBe(clock.now());
    expect(h.logs.lines).toContainEqual(
      expect.objectContaining({ event: "reconcile.groupList", due: 3, refreshed: 3, listedSelf: true }),
    );
  });

  it("does not LIST when no neighbour is due: the pass reads its model by GET", async () => {
    expect(await readThroughGroup(self, h.services.compute, deps())).toBeUndefined();
    expect(lists()).toBe(0);
    expect(h.logs.lines.filter((l) => l.event === "reconcile.groupList")).toEqual([]);
  });

  it("leaves a neighbour that went stale moments ago to its own pass, whose ETag CRP may be about to move", async () => {
    const [a, b] = neighbours as [ReturnType<typeof scaleSetRef>, ReturnType<typeof scaleSetRef>];
    await h.services.cache.markStale(a, "an instance write");
    clock.advance(SETTLE_MS - 1);
    await h.services.cache.markStale(b, "an instance write");
    expect(await readThroughGroup(self, h.services.compute, deps())).toBeUndefined();
    clock.advance(SETTLE_MS);
    expect(await readThroughGroup(self, h.services.compute, deps())).toBeDefined();
    expect(h.logs.lines).toContainEqual(expect.objectContaining({ event: "reconcile.groupList", due: 2 }));
  });
});
