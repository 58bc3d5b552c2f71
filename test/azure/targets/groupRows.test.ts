import { describe, expect, it } from "vitest";
import { CacheRowMac } from "../../../src/azure/cacheRowMac";
import { cacheEntity } from "../../../src/azure/targets/cacheRows";
import { listGroupModelRows } from "../../../src/azure/targets/groupRows";
import { MODEL_ROW, targetPartition } from "../../../src/azure/targets/rowKeys";
import { TargetLeases } from "../../../src/azure/targets/targetLeases";
import { freshTargetStore } from "../../support/freshTable";
import { scaleSetRef } from "../../support/refs";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const SUB = "00000000-aaaa-4bbb-8ccc-000000000472";
const vmss = (group: string, name: string) =>
  scaleSetRef(
    `/subscriptions/${SUB}/resourceGroups/${group}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`,
  );

describe("listGroupModelRows on Azurite", () => {
  it("lists the model rows of one resource group's scale sets, with whether a pass holds each one's lease", async () => {
    const store = await freshTargetStore(() => NOW);
    const mac = new CacheRowMac("unit-test-key-0123456789abcdef");
    const [a, b, elsewhere, prefixed] = [vmss("rg", "a"), vmss("RG", "b"), vmss("rg2", "c"), vmss("rg-x", "d")];
    for (const ref of [a, b, elsewhere, prefixed]) {
      const keys = { partitionKey: targetPartition(ref), rowKey: MODEL_ROW };
      await store.table.createEntity({ ...cacheEntity(keys, "scaleSet", ref.id, "e", {}, NOW - 5, mac), ...keys });
    }
    await new TargetLeases(store).acquire(b, "host", 30_000, false, false);
    const rows = await listGroupModelRows(store, { subscriptionId: SUB, resourceGroup: "Rg" });
    expect(rows.map((r) => [r.scaleSetKey, r.writing, r.readAt]).sort()).toEqual(
      [
        [a.key, false, NOW - 5],
        [b.key, true, NOW - 5],
      ].sort(),
    );
  });

  it("lists nothing for a group with no cached scale sets, or a table not created yet", async () => {
    const store = await freshTargetStore(() => NOW);
    expect(await listGroupModelRows(store, { subscriptionId: SUB, resourceGroup: "none" })).toEqual([]);
    await store.table.deleteTable();
    expect(await listGroupModelRows(store, { subscriptionId: SUB, resourceGroup: "none" })).toEqual([]);
  });
});
