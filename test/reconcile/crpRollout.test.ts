import { beforeEach, describe, expect, it } from "vitest";
import { toIntent, QUEUE_DECLARER } from "../../src/core/declarations";
import type { InstanceModel } from "../../src/core/models";
import { instanceRef } from "../../src/core/resourceIds";
import { awaitingCrpRollout } from "../../src/reconcile/crpRollout";
import { scaleSetRef } from "../support/refs";
import { targetTableOnAzurite } from "../support/targetTable";

/** After a model CRP rolls out itself: which instances are still behind, their cache rows marked stale (Azurite). */
const RG = "/subscriptions/00000000-0000-0000-0000-0000000000b8/resourceGroups/rg";
const REF = scaleSetRef(`${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-crp`);
const POOL = `${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool-a`;
const intents = [
  toIntent({
    scaleSetId: REF.id,
    backendPoolId: POOL,
    ipConfiguration: "",
    state: "present",
    declaredAt: "2026-12-02T10:00:00.000Z",
    requestId: "crp-1",
    declaredBy: QUEUE_DECLARER,
  }),
];

const instance = (instanceId: string, pools: string[]): InstanceModel => ({
  id: `${REF.id}/virtualMachines/${instanceId}`,
  instanceId,
  etag: `W/${instanceId}`,
  location: "westeurope",
  provisioningState: "Succeeded",
  nics: [
    {
      name: "nic",
      primary: true,
      ipConfigurations: [
        { name: "ipconfig1", primary: true, loadBalancerBackendAddressPools: pools.map((id) => ({ id })) },
      ],
    },
  ],
});

describe("awaitingCrpRollout", () => {
  let t: Awaited<ReturnType<typeof targetTableOnAzurite>>;
  const stale = async (id: string) => (await t.cache.readEntry(instanceRef(REF, id)))?.stale;
  beforeEach(async () => {
    t = await targetTableOnAzurite("crp");
  });

  it("is awaiting while an instance does not show the model yet, and marks only that one's row stale", async () => {
    const live = [instance("0", [POOL]), instance("1", [])];
    for (const inst of live) await t.cache.storeInstance(instanceRef(REF, inst.instanceId), inst, undefined);
    expect(await awaitingCrpRollout(REF, live, intents, t.cache)).toBe(true);
    expect(await stale("0")).toBe(false);
    expect(await stale("1")).toBe(true);
    expect((await t.cache.readEntry(instanceRef(REF, "1")))?.staleReason).toMatch(/CRP rolls the model out/);
  });

  it("is done once every instance shows what is declared, marking nothing", async () => {
    const live = [instance("0", [POOL]), instance("1", [POOL])];
    for (const inst of live) await t.cache.storeInstance(instanceRef(REF, inst.instanceId), inst, undefined);
    expect(await awaitingCrpRollout(REF, live, intents, t.cache)).toBe(false);
    expect([await stale("0"), await stale("1")]).toEqual([false, false]);
  });
});
