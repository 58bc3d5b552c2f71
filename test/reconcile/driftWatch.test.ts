import { beforeEach, describe, expect, it } from "vitest";
import { PartitionWriters } from "../../src/azure/targets/targetPasses";
import { TargetDriftTable } from "../../src/azure/targets/targetDrifts";
import { toIntent, type StoredDeclaration } from "../../src/core/declarations";
import type { PassEvent } from "../../src/core/history";
import type { NicConfiguration } from "../../src/core/networkProfile";
import { DriftWatch } from "../../src/reconcile/driftWatch";
import { OutcomeRecorder } from "../../src/reconcile/recordOutcomes";
import { eventDepsOnAzurite } from "../support/eventDeps";
import { scaleSetRef } from "../support/refs";

/**
 * One pass's eye for drift: what it read before writing compared with its applied declarations, each drift attributed
 * to the last foreign writer an event recorded, stored on the declaration, told to history. All on Azurite.
 */
const SUB = "00000000-0000-0000-0000-0000000000bb";
const RG = `/subscriptions/${SUB}/resourceGroups/rg`;
const REF = scaleSetRef(`${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-drift`);
const POOL = `${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool-a`;
const nics = (pools: string[]): NicConfiguration[] => [
  {
    name: "nic",
    primary: true,
    ipConfigurations: [
      { name: "ipconfig1", primary: true, loadBalancerBackendAddressPools: pools.map((id) => ({ id })) },
    ],
  },
];
const CALLER = {
  name: "autoscaler",
  id: "oid-1",
  appId: "app-1",
  operation: "Microsoft.Compute/virtualMachineScaleSets/write",
  correlationId: "corr-1",
  eventId: "evt-1",
  at: undefined,
};

describe("DriftWatch", () => {
  let e: Awaited<ReturnType<typeof eventDepsOnAzurite>>;
  let applied: StoredDeclaration[];
  let told: PassEvent[];
  const drifts = () => new TargetDriftTable(e.t.store).listForTarget(REF);
  const watch = () =>
    new DriftWatch(REF, applied, applied.map(toIntent), {
      drift: {
        writers: { read: (id) => new PartitionWriters(e.t.store, REF).read(id), record: () => Promise.resolve() },
        drifts: new TargetDriftTable(e.t.store),
      },
      declarations: e.t.declarations,
      clock: e.t.clock,
      log: e.t.log,
      events: { emit: (ev) => told.push(ev) },
    });

  beforeEach(async () => {
    e = await eventDepsOnAzurite("drift", RG);
    told = [];
    const outcomes = new OutcomeRecorder(REF, e.t.declarations, e.t.clock);
    const [d] = await e.t.declare(REF, [{ backendPoolId: POOL }]);
    await outcomes.record(d!, { kind: "applied", appliedEtag: "W/1" });
    applied = await e.t.declarations.listForTarget(REF);
    e.t.clock.advance(1_000);
  });

  it("a model that still holds what is applied is no drift: nothing stored, nothing told", async () => {
    const w = watch();
    w.observe([{ kind: "model", ids: [REF.id], nics: nics([POOL]) }]);
    await w.settle(true);
    expect((await drifts()).size).toBe(0);
    expect(told).toEqual([]);
  });

  it("a pool another writer took out is a drift by that writer, repaired when the pass ended well", async () => {
    // The foreign write's event recorded its writer beside the row it invalidated.
    await e.deps.events.invalidate(REF, [{ kind: "model" }], { resourceId: REF.id, caller: CALLER }, "event evt-1", 0);
    const w = watch();
    w.observe([{ kind: "model", ids: [REF.id], nics: nics([]) }]);
    await w.settle(true);
    const [stored] = [...(await drifts()).values()];
    expect(stored).toMatchObject({
      by: { name: "autoscaler", id: "oid-1", appId: "app-1" },
      resourceKind: "model",
      resourceId: REF.id,
      repairedAt: new Date(e.t.clock.now()).toISOString(),
    });
    expect(told).toEqual([expect.objectContaining({ kind: "drift", backendPoolId: POOL, drift: stored })]);
    expect(e.t.log.lines).toContainEqual(
      expect.objectContaining({ event: "drift", targetId: REF.id, backendPoolId: POOL }),
    );
  });

  it("a pass that did not end well leaves the drift unrepaired, its writer unknown when no event named one", async () => {
    const w = watch();
    w.observe([{ kind: "model", ids: [REF.id], nics: nics([]) }]);
    await w.settle(false);
    const [stored] = [...(await drifts()).values()];
    expect(stored).toMatchObject({ by: { name: "unknown" } });
    expect(stored!.repairedAt).toBeUndefined();
  });
});
