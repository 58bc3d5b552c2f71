import { describe, expect, it } from "vitest";
import { CacheRowMac } from "../../../src/azure/cacheRowMac";
import { cacheEntity } from "../../../src/azure/targets/cacheRows";
import { commitTarget } from "../../../src/azure/targets/commitTarget";
import { declarationEntity } from "../../../src/azure/targets/declarationRows";
import { readTarget } from "../../../src/azure/targets/readTarget";
import { driftRowKey, instanceRowKey, MODEL_ROW, targetPartition } from "../../../src/azure/targets/rowKeys";
import { emptyControl } from "../../../src/core/control";
import type { Declaration } from "../../../src/core/declarations";
import { freshTable } from "../../support/freshTable";
import { scaleSetRef } from "../../support/refs";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000466/resourceGroups/rg/providers";
const REF = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss`);
const PK = targetPartition(REF);
const mac = new CacheRowMac("read-target-key");
const ctx = (cacheEnabled = true) => ({
  now: () => NOW,
  bounds: { leaseMs: 60_000, maxRequeueMs: 86_400_000, maxDueMs: 3_600_000 },
  mac,
  cacheEnabled,
});
const declaration = (pool: string): Declaration => ({
  scaleSetId: REF.id,
  backendPoolId: `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/${pool}`,
  ipConfiguration: "",
  state: "present",
  declaredAt: new Date(NOW).toISOString(),
  requestId: pool,
  declaredBy: { id: "c", name: "c", via: "queue" },
});

/** A row for commitTarget: whatever an entity builder made, under its own row key. */
const row = (e: object) => ({
  kind: "create" as const,
  entity: { ...e, rowKey: String((e as { rowKey: unknown }).rowKey) },
});

/** A target's partition as poolsync writes it: control, two declarations, model and instance rows, a drift. */
async function seeded() {
  const table = await freshTable("readtarget");
  const at = new Date(NOW).toISOString();
  await commitTarget(
    table,
    PK,
    [
      row(declarationEntity(PK, declaration("a"), at)),
      row(declarationEntity(PK, declaration("b"), at)),
      row(cacheEntity({ partitionKey: PK, rowKey: MODEL_ROW }, "scaleSet", REF.id, "e", { v: 1 }, NOW, mac)),
      row(cacheEntity({ partitionKey: PK, rowKey: instanceRowKey("3") }, "instance", REF.id, "e", { i: 3 }, NOW, mac)),
      { kind: "create", entity: { rowKey: driftRowKey("k"), drift: "{}" } },
    ],
    { state: { ...emptyControl(), seq: 7 }, base: undefined },
  );
  return table;
}

describe("readTarget on Azurite", () => {
  it("gives a pass its control row, declarations and cache rows from one query", async () => {
    const snap = await readTarget(await seeded(), REF, ctx());
    expect(snap.control.seq).toBe(7);
    expect(snap.controlEtag).toBeTruthy();
    expect(snap.declarations.map((d) => d.requestId).sort()).toEqual(["a", "b"]);
    expect(snap.model?.model).toEqual({ v: 1 });
    expect([...snap.instances.keys()]).toEqual(["3"]);
    expect(snap.problems).toEqual([]);
  });

  it("reads no cache rows with the cache off", async () => {
    const snap = await readTarget(await seeded(), REF, ctx(false));
    expect(snap.model).toBeUndefined();
    expect(snap.instances.size).toBe(0);
    expect(snap.declarations).toHaveLength(2);
  });

  it("leaves out a declaration row that does not decode, naming it, and counts the rest into a missing control row", async () => {
    const table = await freshTable("readtarget");
    const at = new Date(NOW).toISOString();
    await table.createEntity(declarationEntity(PK, declaration("a"), at));
    await table.createEntity({ ...declarationEntity(PK, declaration("b"), at), state: "maybe" });
    const snap = await readTarget(table, REF, ctx());
    expect(snap.declarations.map((d) => d.requestId)).toEqual(["a"]);
    expect(snap.problems).toEqual([
      { rowKey: expect.stringMatching(/^%2F/), reason: expect.stringMatching(/^state: /) },
    ]);
    expect(snap.control.counts.present).toBe(1);
    expect(snap.controlEtag).toBeUndefined();
  });

  it("reads a target of a table not created yet as empty", async () => {
    const table = await freshTable("readtarget");
    await table.deleteTable();
    const snap = await readTarget(table, REF, ctx());
    expect(snap.declarations).toEqual([]);
  });
});
