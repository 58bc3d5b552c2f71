// The interleaving property on a Flexible scale set, through the whole app: another writer PUTs a stale copy of a
// VM's NIC (with its own change), without If-Match, between poolsync's read and its write, on any of the NICs, once
// or twice in a row. Nothing of theirs is lost, our pool is on every NIC, and every stale PUT cost exactly one 412.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../sim";
import { addNicPool, nicPoolsByIpConfig, stalePut } from "../../sim/wire";
import { parseTargetId } from "../../src/core/resourceIds";
import { DEMO, startHarness } from "../support/harness";

const RG = `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers`;
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const V6_POOL = `${RG}/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s-v6`;

const race = fc.record({
  vm: fc.constantFrom(0, 1),
  times: fc.constantFrom(1, 2),
  change: fc.constantFrom("tag" as const, "v6pool" as const),
});

describe("Flexible scale set: stale NIC PUTs by another writer between our read and write", () => {
  it("property: nothing of theirs is lost, our pool is on every NIC, one 412 per stale PUT", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(race, { selector: (r) => r.vm, maxLength: 2 }), async (races) => {
        const h = await startHarness();
        try {
          const c = h.sim.control;
          const nics = c
            .virtualMachines(FLEX)
            .map(
              (vm) =>
                (
                  (vm["properties"] as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
                    .networkInterfaces[0] as { id: string }
                ).id,
            );
          for (const r of races) {
            const nic = nics[r.vm] as string;
            const stale = c.resource(nic) as JsonObject;
            const change =
              r.change === "tag"
                ? (n: JsonObject) => void (n["tags"] = { theirs: "kept" })
                : addNicPool("ipConfig0-v6", V6_POOL);
            c.beforeNextWrite(nic, stalePut(stale, change), { times: r.times });
          }
          await h.send({ v: 1, kind: "declare", targetId: FLEX, backendPoolId: DEMO.poolId, state: "present" });
          await h.drainUntilEmpty(20_000);
          for (const [i, nic] of nics.entries()) {
            const now = c.resource(nic) as JsonObject;
            const r = races.find((x) => x.vm === i);
            expect(nicPoolsByIpConfig(now)).toEqual({
              ipConfig0: [DEMO.poolId.toLowerCase()],
              "ipConfig0-v6": r?.change === "v6pool" ? [V6_POOL.toLowerCase()] : [],
            });
            if (r?.change === "tag") expect(now["tags"]).toEqual({ theirs: "kept" });
            expect(c.stats(nic).status412).toBe(r?.times ?? 0);
          }
          const target = parseTargetId(FLEX);
          if (!target.ok) throw new Error(target.reason);
          const [decl] = await h.services.declarations.listForTarget(target.value);
          expect(decl?.outcome.kind).toBe("applied");
        } finally {
          await h.stop();
        }
      }),
      {
        numRuns: 6,
        examples: [
          [
            [
              { vm: 0, times: 2, change: "v6pool" },
              { vm: 1, times: 1, change: "tag" },
            ],
          ],
        ],
      },
    );
  }, 120_000);
});
