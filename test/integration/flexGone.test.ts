import { afterEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * A Flexible VM scaled in (deleted with its NICs) while poolsync writes its scale set's NICs (issue 25): the VM is
 * gone, not a failure. Its NIC is skipped, the declaration is applied on the other VM, and nothing is retried for it.
 * (This held before issue 25 already: a NIC write's 412 re-read finds the NIC gone; kept so it stays so.)
 */

const RG = `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers`;
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;

describe("a Flexible VM that disappears mid-reconcile", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  for (const ended of [false, true]) {
    it(`is skipped, and the declaration applied on the rest (${ended ? "gone with its NIC" : "being deleted"})`, async () => {
      h = await startHarness();
      const c = h.sim.control;
      const vms = c.virtualMachines(FLEX);
      expect(vms.length).toBeGreaterThanOrEqual(2);
      const last = vms.at(-1)!;
      const lastNic = (last["properties"] as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
        .networkInterfaces[0]!.id;
      const going = c.beforeNextWrite(lastNic, () => {
        c.delete(last["id"] as string);
        if (ended) c.clock.advance(60_000);
      });
      await h.send({ v: 1, kind: "declare", targetId: FLEX, backendPoolId: DEMO.poolId, state: "present" });
      const outcomes = await h.drain();
      expect(going.applied()).toBe(1);
      expect(outcomes.map((o) => (o.result === "reconciled" ? o.report.result : o.result))).toEqual(["applied"]);
      const [d] = await h.services.declarations.listForTarget(scaleSetRef(FLEX));
      expect(d?.outcome.kind).toBe("applied");
      for (const vm of c.virtualMachines(FLEX)) {
        const nicId = (vm["properties"] as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
          .networkInterfaces[0]!.id;
        const nic = c.resource(nicId) as {
          properties: { ipConfigurations: { properties: { loadBalancerBackendAddressPools?: { id: string }[] } }[] };
        };
        expect(
          nic.properties.ipConfigurations[0]!.properties.loadBalancerBackendAddressPools?.map((p) =>
            p.id.toLowerCase(),
          ),
        ).toContain(DEMO.poolId.toLowerCase());
      }
      expect(c.stats().status429).toBe(0);
    });
  }
});
