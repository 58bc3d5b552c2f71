import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupsWorld, groupsWorldIds, WIDE_SUBSCRIPTION } from "../../devkit/worlds";
import { groupKeyOf, listPays, listResourceGroup } from "../../src/reconcile/listResourceGroup";
import { startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/** Many scale sets of one resource group read by paged LIST instead of a GET each: the real SDK against the simulator. */
describe("listPays and groupKeyOf (pure)", () => {
  it("a LIST pays only when it replaces at least two GETs with fewer pages", () => {
    expect(listPays(1, 1)).toBe(false);
    expect(listPays(2, 2)).toBe(true);
    expect(listPays(2, 150)).toBe(false); // two pages guessed for two GETs saved
    expect(listPays(3, 150)).toBe(true);
  });

  it("keys a group in lower case, as ARM compares", () => {
    expect(groupKeyOf({ subscriptionId: "AbC", resourceGroup: "RG-One" })).toBe("abc/rg-one");
  });
});

describe("listResourceGroup", () => {
  const PER_GROUP = [5];
  const scope = { subscriptionId: WIDE_SUBSCRIPTION, resourceGroup: "rg-0" };
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ sim: { seed: groupsWorld(PER_GROUP, 1), listPageSize: 2 } });
  });
  afterAll(async () => {
    await h.stop();
  });

  it("follows nextLink to the last page: every model by key, complete", async () => {
    const r = await listResourceGroup(h.services.compute, scope, { maxPages: 10 });
    expect(r).toMatchObject({ pages: 3, complete: true, resumeAt: undefined });
    expect([...r.models.keys()].sort()).toEqual(
      groupsWorldIds(PER_GROUP)
        .map((id) => scaleSetRef(id).key)
        .sort(),
    );
    expect(r.models.get(scaleSetRef(groupsWorldIds(PER_GROUP)[0]!).key)?.etag).toBeTruthy();
  });

  it("stops at its page budget with where to resume; a resumed LIST is never complete", async () => {
    const cut = await listResourceGroup(h.services.compute, scope, { maxPages: 2 });
    expect(cut).toMatchObject({ pages: 2, complete: false });
    expect(cut.models.size).toBe(4);
    expect(cut.resumeAt).toBeTruthy();
    const rest = await listResourceGroup(h.services.compute, scope, { maxPages: 5, resumeFrom: cut.resumeAt! });
    expect(rest).toMatchObject({ pages: 1, complete: false, resumeAt: undefined });
    expect(rest.models.size).toBe(1);
  });

  it("a group that is gone answers nothing and is not complete, so each scale set falls back to its GET", async () => {
    const gone = await listResourceGroup(h.services.compute, { ...scope, resourceGroup: "rg-gone" }, { maxPages: 3 });
    expect(gone).toMatchObject({ pages: 0, complete: false });
    expect(gone.models.size).toBe(0);
  });
});
