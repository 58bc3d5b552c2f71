import { describe, expect, it } from "vitest";
import { declarationHistory } from "../../../src/azure/targets/historyRows";
import { targetPartition, writerRowKey } from "../../../src/azure/targets/rowKeys";
import { StoreTargetEvents } from "../../../src/azure/targets/targetEvents";
import { TargetDriftTable } from "../../../src/azure/targets/targetDrifts";
import { TargetHistoryTable } from "../../../src/azure/targets/targetHistory";
import { PartitionWriters, StoreTargetPasses } from "../../../src/azure/targets/targetPasses";
import type { Drift } from "../../../src/core/drift";
import { callerOf } from "../../../src/core/eventCaller";
import type { OpenPass } from "../../../src/core/targetPasses";
import { declared, NOW, REF } from "../../support/targetPass";
import { targetTableOnAzurite } from "../../support/targetTable";

const TTL = 60_000;
const NIC = REF.id.replace(
  "Microsoft.Compute/virtualMachineScaleSets/vmss",
  "Microsoft.Network/networkInterfaces/nic-1",
);

async function passesOnAzurite() {
  const t = await targetTableOnAzurite("tpasses");
  const passes = new StoreTargetPasses(t.store);
  /** The pass `holder` opens on REF; the test fails if the lease is another's. */
  const open = async (holder: string): Promise<OpenPass & { handover?: string }> => {
    const take = await passes.acquire(REF, holder, TTL, false, false);
    if (take.kind !== "acquired") throw new Error(`${holder} should hold the lease`);
    return Object.assign(take.pass, take.handover ? { handover: take.handover } : {});
  };
  return { ...t, passes, open };
}

describe("StoreTargetPasses on Azurite", () => {
  it("writes a pass's history, drifts and writes in doubt only with its commit, beside the control row", async () => {
    const t = await passesOnAzurite();
    const pass = await t.open("host-a");
    pass.recordHistory(declarationHistory(declared("a"), new Date(NOW).toISOString()));
    await pass.drifts.record(REF, "pool-a|", { operation: "removed us", at: "2026-12-02T09:59:00Z" } as Drift);
    pass.recordDoubt({ resourceId: REF.id, ifMatch: "W/1", at: NOW });
    const history = new TargetHistoryTable(t.store);
    const drifts = new TargetDriftTable(t.store);
    expect([(await history.page(REF.id, 10)).entries.length, (await drifts.listForTarget(REF)).size]).toEqual([0, 0]);
    expect((await t.passes.readControl(REF)).doubts).toEqual([]);
    await pass.commit((s) => s);
    expect((await history.page(REF.id, 10)).entries).toMatchObject([{ kind: "declaration", requestId: "a" }]);
    expect((await drifts.listForTarget(REF)).get("pool-a|")).toMatchObject({ operation: "removed us" });
    expect((await t.passes.readControl(REF)).doubts).toEqual([{ resourceId: REF.id, ifMatch: "W/1", at: NOW }]);
  });

  it("lets go at once only of its own holder's lease, leaving the handover for the next holder", async () => {
    const t = await passesOnAzurite();
    await t.open("host-a");
    await t.passes.releaseNow(REF, "host-b", "not mine to give");
    expect((await t.passes.readControl(REF)).lease.holder).toBe("host-a");
    await t.passes.releaseNow(REF, "host-a", "budgets");
    expect((await t.passes.readControl(REF)).lease).toMatchObject({ holder: "", handover: "budgets" });
    expect((await t.open("host-b")).handover).toBe("budgets");
  });

  it("reopens under the same lease with a new read of the partition, and commits from it", async () => {
    const t = await passesOnAzurite();
    await t.declarations.upsert(REF, declared("a"));
    const pass = await t.open("host-a");
    await t.declarations.upsert(REF, declared("b"));
    const next = await pass.reopen();
    expect((await next.declarations.listForTarget(REF)).map((d) => d.requestId).sort()).toEqual(["a", "b"]);
    expect([next.control.lease.holder, next.control.counts.present]).toEqual(["host-a", 2]);
    expect(await next.commit((s) => ({ ...s, debounceAt: NOW }))).toMatchObject({ debounceAt: NOW });
    expect((await t.passes.readControl(REF)).debounceAt).toBe(NOW);
  });
});

describe("PartitionWriters on Azurite", () => {
  it("reads the last foreign writer an event kept for a resource, whatever its ID's case; none for an unreadable row", async () => {
    const t = await passesOnAzurite();
    await t.declarations.upsert(REF, declared("a"));
    const caller = callerOf({ claims: { name: "Someone Else" }, correlationId: "corr-1" }, "ev-1", undefined);
    const events = new StoreTargetEvents(t.store, t.owners);
    await events.invalidate(REF, [{ kind: "model" }], { resourceId: NIC, caller }, "written", 30_000);
    const writers = new PartitionWriters(t.store, REF);
    expect(await writers.read(NIC.toUpperCase())).toEqual({ ...caller, seenAt: NOW });
    expect(await writers.read(`${NIC}-other`)).toBeUndefined();
    const torn = { partitionKey: targetPartition(REF), rowKey: writerRowKey(NIC), caller: "{torn", seenAt: NOW };
    await t.table.upsertEntity(torn, "Replace");
    expect(await writers.read(NIC)).toBeUndefined();
  });
});
