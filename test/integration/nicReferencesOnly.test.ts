// A Flexible scale set whose VMs answer only their NIC references (`networkInterfaces`, the API specification's other
// shape; the simulator's seed chooses which VMs do): a declaration naming the model's NIC configuration
// ("nicConfig/ipconfig") is placed on the NIC CRP built from that configuration, mapped on the scale set model's NIC
// configurations (primary flag, ip configuration names) where the VM states none of its own. The reconcile, the plan,
// the status view and the timer's repair all map it so.
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_SEED, type JsonObject, type SeedSpec } from "../../sim";
import { nicPoolsByIpConfig } from "../../sim/wire";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import { loadScaleSetView } from "../../src/intake/scaleSetView";
import { DEMO, startHarness, type Harness } from "../support/harness";

const FLEX = `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
/** The model's NIC configuration; its VMs' NICs are named otherwise (`etag-k8s-flex-0-<hex>-nic0`). */
const SELECTOR = "etag-k8s-flex-0-nic-0/ipConfig0";
const pool = DEMO.poolId.toLowerCase();

function seedWith(vmNetworkProfile: "nicReferences" | "alternating"): SeedSpec {
  const seed = structuredClone(DEMO_SEED);
  const rg = seed.subscriptions[0]!.resourceGroups[0]!;
  rg.scaleSets = rg.scaleSets!.map((s) => (s.orchestrationMode === "Flexible" ? { ...s, vmNetworkProfile } : s));
  return seed;
}

const target = (): TargetRef => {
  const r = parseTargetId(FLEX);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};

/** Each VM's NIC, and whether the VM answers its NIC configurations. */
function vmNics(h: Harness): { nic: string; ownConfigs: boolean }[] {
  return h.sim.control.virtualMachines(FLEX).map((vm) => {
    const p = (vm["properties"] as { networkProfile: JsonObject }).networkProfile as {
      networkInterfaces: { id: string }[];
      networkInterfaceConfigurations?: unknown[];
    };
    return { nic: p.networkInterfaces[0]!.id, ownConfigs: p.networkInterfaceConfigurations !== undefined };
  });
}

async function declare(h: Harness): Promise<void> {
  await h.services.declarations.upsert(target(), {
    scaleSetId: FLEX,
    backendPoolId: DEMO.poolId,
    ipConfiguration: SELECTOR,
    state: "present",
    declaredAt: new Date().toISOString(),
    requestId: "r-refs",
    declaredBy: QUEUE_DECLARER,
  });
}

describe("Flexible VMs that answer only their NIC references, with a 'nicConfig/ipconfig' declaration", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("the reconcile places it on every VM's NIC, of either shape (before: 'does not exist' on the references-only VMs)", async () => {
    h = await startHarness({ sim: { seed: seedWith("alternating") } });
    expect(vmNics(h).map((v) => v.ownConfigs)).toEqual([true, false]);
    await declare(h);
    expect(await h.services.reconcile(target(), { reason: "test", attempt: 0 })).toMatchObject({ result: "applied" });
    const [d] = await h.services.declarations.listForTarget(target());
    expect(d?.outcome.kind, JSON.stringify(d?.outcome)).toBe("applied");
    for (const { nic } of vmNics(h))
      expect(nicPoolsByIpConfig(h.sim.control.resource(nic) as JsonObject).ipConfig0).toEqual([pool]);
  });

  it("the plan writes it on every VM's NIC and leaves nothing unplaceable", async () => {
    h = await startHarness({ sim: { seed: seedWith("nicReferences") } });
    await declare(h);
    const plan = await h.services.plan(target());
    expect(plan.unplaceable).toEqual([]);
    const nics = plan.writes.filter((w) => w.kind === "nic").map((w) => w.id.toLowerCase());
    expect(nics.sort()).toEqual(
      vmNics(h)
        .map((v) => v.nic.toLowerCase())
        .sort(),
    );
    for (const w of plan.writes.filter((x) => x.kind === "nic"))
      expect(w.ipConfigurations).toEqual([
        expect.objectContaining({
          nicConfiguration: "etag-k8s-flex-0-nic-0",
          ipConfiguration: "ipConfig0",
          gain: [pool],
        }),
      ]);
  });

  it("the status view names each NIC after the model's configuration and sees every VM holding the membership", async () => {
    h = await startHarness({ sim: { seed: seedWith("nicReferences") } });
    await declare(h);
    expect(await h.services.reconcile(target(), { reason: "test", attempt: 0 })).toMatchObject({ result: "applied" });
    const view = await loadScaleSetView(target(), {
      declarations: h.services.declarations,
      cache: h.services.cache,
      now: () => Date.now(),
      cacheTtlMs: h.config.cacheTtlMs,
    });
    expect(view.vms?.map((vm) => vm.nics.map((n) => n.name))).toEqual([
      ["etag-k8s-flex-0-nic-0"],
      ["etag-k8s-flex-0-nic-0"],
    ]);
    const m = view.memberships[0]!;
    expect(m.vms?.map((v) => [v.state, v.note])).toEqual([
      ["present", undefined],
      ["present", undefined],
    ]);
    expect(m.sync).toBe("in-sync");
  });

  it("the timer: drift on the model is found, and the reconcile it asks for keeps the pool on the references-only VMs' NICs", async () => {
    h = await startHarness({ sim: { seed: seedWith("nicReferences") } });
    await declare(h);
    expect(await h.services.reconcile(target(), { reason: "test", attempt: 0 })).toMatchObject({ result: "applied" });
    // Another writer drops the pool from the model and from one VM's NIC; no event reaches poolsync.
    const [first] = vmNics(h);
    const drop = (r: JsonObject) => {
      const text = JSON.stringify(r)
        .replace(new RegExp(`\\{"id":"${DEMO.poolId}"\\}`, "gi"), "")
        .replace(/,\]/g, "]")
        .replace(/\[,/g, "[");
      Object.assign(r, JSON.parse(text) as JsonObject);
    };
    h.sim.control.write(FLEX, drop);
    h.sim.control.write(first!.nic, drop);
    // Their writes' operations end before poolsync looks (one still running answers its write 409, a retry later).
    h.sim.control.settle();
    expect(nicPoolsByIpConfig(h.sim.control.resource(first!.nic) as JsonObject).ipConfig0).toEqual([]);
    await h.services.cache.markStale(
      target() as Parameters<typeof h.services.cache.markStale>[0],
      "test: past the TTL",
    );
    const run = await h.services.reconcileStale();
    expect(run).toMatchObject({ driftFound: 1, enqueued: 1 });
    await h.drainUntilEmpty(30_000);
    for (const { nic } of vmNics(h))
      expect(nicPoolsByIpConfig(h.sim.control.resource(nic) as JsonObject).ipConfig0).toEqual([pool]);
    const [d] = await h.services.declarations.listForTarget(target());
    expect(d?.outcome.kind).toBe("applied");
  });
});
