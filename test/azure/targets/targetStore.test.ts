import { describe, expect, it } from "vitest";
import { memoryLogger } from "../../../src/app/logger";
import { declarationEntity } from "../../../src/azure/targets/declarationRows";
import { CONTROL_ROW, targetPartition } from "../../../src/azure/targets/rowKeys";
import { freshTargetStore, targetStoreOn } from "../../support/freshTable";
import { scaleSetRef } from "../../support/refs";
import type { ControlState } from "../../../src/core/control";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000468/resourceGroups/rg/providers";
const A = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-a`);
const B = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-b`);
const bump = (s: ControlState): ControlState => ({ ...s, seq: s.seq + 1 });

describe("TargetStore on Azurite", () => {
  it("changes the control row conditionally, and two hosts racing both land, one after the other", async () => {
    const store = await freshTargetStore(() => NOW);
    const twin = targetStoreOn(store.table, () => NOW);
    await Promise.all([
      store.updateControl(A, (s) => ({ state: bump(s), result: 0 })),
      twin.updateControl(A, (s) => ({ state: bump(s), result: 0 })),
    ]);
    expect((await store.readControl(A)).state.seq).toBe(2);
  });

  it("writes nothing when the change answers no state, and hands back the caller's result", async () => {
    const store = await freshTargetStore(() => NOW);
    const { result, handle } = await store.updateControl(A, () => ({ state: undefined, result: "unchanged" }));
    expect(result).toBe("unchanged");
    expect(handle.etag).toBeUndefined();
    await expect(store.table.getEntity(targetPartition(A), CONTROL_ROW)).rejects.toMatchObject({ statusCode: 404 });
  });

  it("rebuilds an unreadable control row from the target's declarations, and logs the row once", async () => {
    const log = memoryLogger();
    const store = await freshTargetStore(() => NOW, log);
    const pk = targetPartition(A);
    const at = new Date(NOW).toISOString();
    await store.table.createEntity(
      declarationEntity(
        pk,
        {
          scaleSetId: A.id,
          backendPoolId: `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/p`,
          ipConfiguration: "",
          state: "present",
          declaredAt: at,
          requestId: "r",
          declaredBy: { id: "c", name: "c", via: "queue" },
        },
        at,
      ),
    );
    await store.table.createEntity({ partitionKey: pk, rowKey: CONTROL_ROW, state: "{torn" });
    const handle = await store.readControl(A);
    expect(handle.state.counts.present).toBe(1);
    expect(log.lines.filter((l) => l.event === "storage.row-unusable")).toHaveLength(1);
  });

  it("lists every target's control row, and the attempt chains in progress", async () => {
    const store = await freshTargetStore(() => NOW);
    await store.updateControl(A, (s) => ({ state: bump(s), result: 0 }));
    const attempt = { attempt: 2, nextAttemptAt: NOW + 60_000, reason: "429" };
    await store.updateControl(B, (s) => ({ state: { ...s, attempt }, result: 0 }));
    expect([...(await store.listControls()).keys()].sort()).toEqual([A.key, B.key].sort());
    expect([...(await store.listAttempts()).keys()]).toEqual([B.key]);
  });
});
