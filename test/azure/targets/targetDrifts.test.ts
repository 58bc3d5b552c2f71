import { describe, expect, it } from "vitest";
import { TargetDriftTable } from "../../../src/azure/targets/targetDrifts";
import { driftRowKey, targetPartition } from "../../../src/azure/targets/rowKeys";
import type { Drift } from "../../../src/core/drift";
import { freshTargetStore } from "../../support/freshTable";
import { scaleSetRef } from "../../support/refs";

const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000461/resourceGroups/rg/providers";
const a = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-a`);
const b = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-b`);
const drift = (operation: string) => ({ operation, at: "2026-12-02T10:00:00Z" }) as unknown as Drift;

describe("TargetDriftTable on Azurite", () => {
  it("keeps each declaration's last drift, per target", async () => {
    const store = await freshTargetStore(() => 0);
    const drifts = new TargetDriftTable(store);
    await drifts.record(a, "pool-1|", drift("first"));
    await drifts.record(a, "pool-1|", drift("second"));
    await drifts.record(a, "pool-2|ipconfig", drift("other"));
    await drifts.record(b, "pool-1|", drift("b's"));
    expect(await drifts.listForTarget(a)).toEqual(
      new Map([
        ["pool-1|", drift("second")],
        ["pool-2|ipconfig", drift("other")],
      ]),
    );
  });

  it("leaves an unreadable drift row out instead of failing the list", async () => {
    const store = await freshTargetStore(() => 0);
    await store.table.upsertEntity({ partitionKey: targetPartition(a), rowKey: driftRowKey("k"), drift: "{torn" });
    expect((await new TargetDriftTable(store).listForTarget(a)).size).toBe(0);
  });
});
