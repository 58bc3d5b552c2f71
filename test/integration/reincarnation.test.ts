import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { addIpConfig, instanceNics, poolsByIpConfig } from "../../sim/wire";
import { manualClock, startHarness, SUITE_CACHE_ENABLED, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * A reused instance ID can defeat If-Match (issue 25): Azure reuses the IDs of deleted instances, and a new instance
 * starts its ETag again, so a cached row of the dead instance 1 can carry the very ETag the new instance 1 has. A write
 * computed from that row would pass If-Match and give the new VM a network profile built from the dead one: here it
 * would drop the ip configuration another writer put in the model, which the new instance was built with. Cached rows
 * carry the instance's vmId, and no instance write is computed from a cached body without ARM's word on which
 * incarnation is live.
 */

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const ref = scaleSetRef(VMSS);
const POOLS = [0, 1].map((i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));
const SUBNET = `/subscriptions/${WIDE_SUBSCRIPTION}/resourceGroups/wide/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
const INSTANCE_1 = `${VMSS}/virtualMachines/1`;

describe("an instance ID reused after scale-in", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it.skipIf(!SUITE_CACHE_ENABLED)(
    "is never written from the dead instance's cached body, even when the new ETag equals the cached one",
    async () => {
      const clock = manualClock(Date.now());
      h = await startHarness({
        clock,
        sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 2 }) },
        env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}` },
      });
      const sim = h.sim.control;
      const declare = (pool: string, i: number) =>
        h!.services.declarations.upsert(ref, {
          scaleSetId: VMSS,
          backendPoolId: pool,
          ipConfiguration: "",
          state: "present",
          declaredAt: new Date(clock.now()).toISOString(),
          requestId: `r-${i}`,
          declaredBy: QUEUE_DECLARER,
        });

      await declare(POOLS[0]!, 0);
      expect((await h.services.reconcile(ref, { reason: "test", attempt: 0 })).result).toBe("applied");
      const dead = sim.resource(INSTANCE_1)!;
      expect(dead["etag"]).toBe('"2"'); // our write moved it from "1"

      // Unseen by poolsync (no event reaches it): another writer adds its ip configuration to the model, then a
      // scale-in and a scale-out bring instance 1 back as a new VM built from that model.
      sim.write(VMSS, addIpConfig("theirs", SUBNET));
      sim.settle(); // its operation ends first: a scale meets it with 409, as it would the app
      sim.scale(VMSS, 1);
      sim.settle();
      sim.scale(VMSS, 2);
      sim.settle();
      // The new instance starts at "1" and stays there once created (recorded); one write of its own (another
      // writer's user data) brings it to the "2" the dead one had.
      sim.write(INSTANCE_1, (r) => {
        (r["properties"] as Record<string, unknown>)["userData"] = Buffer.from("theirs").toString("base64");
      });
      sim.settle();
      const reborn = sim.resource(INSTANCE_1)!;
      expect((reborn["properties"] as { vmId: string }).vmId).not.toBe((dead["properties"] as { vmId: string }).vmId);
      expect(reborn["etag"]).toBe(dead["etag"]); // If-Match cannot tell them apart
      expect(Object.keys(poolsByIpConfig(instanceNics(reborn)))).toContain("theirs");

      await declare(POOLS[1]!, 1);
      const report = await h.services.reconcile(ref, { reason: "test", attempt: 0 });
      expect(report.result).toBe("applied");
      const after = poolsByIpConfig(instanceNics(sim.resource(INSTANCE_1)!));
      // The new instance's write was computed from itself: the other writer's ip configuration survives, both pools are
      // in.
      expect(Object.keys(after).sort()).toEqual(["ipConfig0", "theirs"]);
      expect([...after["ipConfig0"]!].sort()).toEqual(POOLS.map((p) => p.toLowerCase()).sort());
      expect(h.logs.lines.some((e) => e["event"] === "instance.reborn")).toBe(true);
    },
  );
});
