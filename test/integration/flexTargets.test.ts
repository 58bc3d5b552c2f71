// Flexible scale sets, standalone VMs and dual stack against the simulator, through the queue trigger: the
// membership of existing VMs lands on their NIC resources with If-Match, and another writer's NIC change survives.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { addNicPool, modelNics, nicPoolsByIpConfig, poolsByIpConfig, stalePut } from "../../sim/wire";
import type { JsonObject } from "../../sim";
import { parseTargetId } from "../../src/core/resourceIds";

const RG = `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers`;
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const VM = `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const VM_NIC = `${RG}/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const V6_POOL = `${RG}/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s-v6`;
const pool = DEMO.poolId.toLowerCase();
const v6 = V6_POOL.toLowerCase();

const declare = (targetId: string, extra: Record<string, unknown> = {}) => ({
  v: 1,
  kind: "declare",
  targetId,
  backendPoolId: DEMO.poolId,
  state: "present",
  ...extra,
});

function target(id: string) {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

describe("NIC targets against the simulator: no lost update", () => {
  let h: Harness;
  beforeEach(async () => {
    // Event reconciles right away (no debounce window), so a test sees the one an event enqueues.
    h = await startHarness({ env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "0" } });
  });
  afterEach(async () => {
    await h.stop();
  });

  const flexNics = (): string[] =>
    h.sim.control
      .virtualMachines(FLEX)
      .map(
        (vm) =>
          (
            (vm["properties"] as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
              .networkInterfaces[0] as { id: string }
          ).id,
      );

  it("Flexible: writes the model with its networkApiVersion, then each VM's NIC; a stale NIC PUT by another writer between our read and write loses nothing", async () => {
    const c = h.sim.control;
    const [nic0, nic1] = flexNics() as [string, string];
    // The other writer read NIC 0 before us and PUTs its copy, with its own pool, without If-Match, just before our
    // write.
    const stale = c.resource(nic0) as JsonObject;
    const raced = c.beforeNextWrite(nic0, stalePut(stale, addNicPool("ipConfig0-v6", V6_POOL)));

    await h.send(declare(FLEX));
    await h.drain();

    expect(raced.applied()).toBe(1);
    const model = c.resource(FLEX) as JsonObject;
    expect(
      (
        (model["properties"] as JsonObject)["virtualMachineProfile"] as {
          networkProfile: { networkApiVersion: string };
        }
      ).networkProfile.networkApiVersion,
    ).toBe("2020-11-01");
    expect(poolsByIpConfig(modelNics(model))).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [] });
    expect(nicPoolsByIpConfig(c.resource(nic0) as JsonObject)).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [v6] });
    expect(nicPoolsByIpConfig(c.resource(nic1) as JsonObject)).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [] });
    // One 412 on NIC 0, one re-read, one successful retry; NIC 1 written once.
    expect(c.stats(nic0)).toMatchObject({ status412: 1, nicPuts: 2 });
    expect(c.stats(nic1)).toMatchObject({ status412: 0, nicPuts: 1 });
    expect(c.stats(FLEX)).toMatchObject({ puts: 1, instanceLists: 0, instancePuts: 0 });
    const [decl] = await h.services.declarations.listForTarget(target(FLEX));
    expect(decl?.outcome.kind).toBe("applied");
    expect(c.poolMembers(DEMO.poolId).sort()).toEqual(
      [`${nic0}/ipConfigurations/ipConfig0`, `${nic1}/ipConfigurations/ipConfig0`].sort(),
    );
    // Our NIC writes' events are recognised as ours.
    const ownEvents = c
      .events()
      .filter(
        (e) =>
          e.data.operationName === "Microsoft.Network/networkInterfaces/write" && e.data.claims["appid"] !== "other",
      );
    expect(ownEvents.length).toBeGreaterThan(0);

    // Scale-out VMs come up in the pool from the model.
    c.scale(FLEX, 3);
    c.settle();
    const [, , nic2] = flexNics() as [string, string, string];
    expect(nicPoolsByIpConfig(c.resource(nic2) as JsonObject)).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [] });
  });

  it("events: our NIC writes are recognised as ours; another writer's NIC write wakes the Flexible scale set's reconcile, which puts the pool back", async () => {
    const c = h.sim.control;
    const events: unknown[] = [];
    c.onEvent((e) => events.push(e));
    await h.send(declare(FLEX));
    await h.drain();
    c.settle();
    const nicWrites = events.filter(
      (e) =>
        (e as { data: { operationName: string } }).data.operationName === "Microsoft.Network/networkInterfaces/write",
    );
    expect(nicWrites).toHaveLength(2);
    const outcomes = [];
    for (const e of nicWrites) outcomes.push(await h.services.handleResourceEvent(e));
    // Our client request ids say so themselves, cache on or off (azure/requestIds.ts).
    expect(outcomes).toEqual(["own-write", "own-write"]);

    const [nic0] = flexNics() as [string];
    events.length = 0;
    c.write(nic0, (nic) => {
      for (const ipc of (
        nic as unknown as {
          properties: { ipConfigurations: { properties: { loadBalancerBackendAddressPools?: unknown[] } }[] };
        }
      ).properties.ipConfigurations) {
        ipc.properties.loadBalancerBackendAddressPools = [];
      }
    });
    c.settle();
    expect(nicPoolsByIpConfig(c.resource(nic0) as JsonObject)).toEqual({ ipConfig0: [], "ipConfig0-v6": [] });
    const [theirs] = events;
    // Whose NIC it is, the shared table says (written when the scale set's reconcile first read it), cache on or off.
    expect(await h.services.handleResourceEvent(theirs)).toBe("invalidated+reconcile");
    await h.drainUntilEmpty(10_000);
    expect(nicPoolsByIpConfig(c.resource(nic0) as JsonObject)).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [] });
  });

  it("a Flexible VM deleted by another writer: its event drops its rows and wakes the scale set, whose reconcile skips it", async () => {
    const c = h.sim.control;
    await h.send(declare(FLEX));
    await h.drain();
    c.settle();
    const [vm0] = c.virtualMachines(FLEX).map((v) => String(v.id)) as [string];
    if (h.services.cache.enabled) expect(await h.services.cache.readEntry(target(vm0) as never)).toBeDefined();
    const events: unknown[] = [];
    c.onEvent((e) => events.push(e));
    c.delete(vm0);
    expect(c.virtualMachines(FLEX).find((v) => String(v.id) === vm0)?.["properties"]).toMatchObject({
      provisioningState: "Deleting",
    });
    // A reconcile while it is being deleted skips it.
    await h.send({ v: 1, kind: "reconcile", targetId: FLEX, reason: "test" });
    const [during] = await h.drain();
    expect(during).toMatchObject({ result: "reconciled", report: { result: "unchanged" } });
    c.settle();
    const deleted = events.find(
      (e) =>
        (e as { data: { operationName: string } }).data.operationName === "Microsoft.Compute/virtualMachines/delete",
    );
    // The scale set's pass is woken (the VM's owner is known from its reconcile, cache on or off).
    expect(await h.services.handleResourceEvent(deleted)).toBe("deleted+reconcile");
    expect(await h.services.cache.readEntry(target(vm0) as never)).toBeUndefined();
    expect(await h.queueDepth()).toBe(1); // the scale set's reconcile, woken
    await h.drainUntilEmpty(10_000);
    expect(c.virtualMachines(FLEX)).toHaveLength(1);
    const [decl] = await h.services.declarations.listForTarget(target(FLEX));
    expect(decl?.outcome.kind).toBe("applied");
  });

  it("a standalone VM: its NIC only, with another writer racing on it", async () => {
    const c = h.sim.control;
    const stale = c.resource(VM_NIC) as JsonObject;
    c.beforeNextWrite(
      VM_NIC,
      stalePut(stale, (nic) => {
        nic["tags"] = { owner: "other" };
      }),
    );
    await h.send(declare(VM));
    await h.drain();
    const nic = c.resource(VM_NIC) as JsonObject;
    expect(nicPoolsByIpConfig(nic)).toEqual({ ipConfig0: [pool] });
    expect(nic["tags"]).toEqual({ owner: "other" });
    expect(c.stats(VM_NIC)).toMatchObject({ status412: 1, nicPuts: 2 });
    const [decl] = await h.services.declarations.listForTarget(target(VM));
    expect(decl?.outcome.kind).toBe("applied");

    await h.send(declare(VM, { state: "absent" }));
    await h.drain();
    expect(nicPoolsByIpConfig(c.resource(VM_NIC) as JsonObject)).toEqual({ ipConfig0: [] });
    const [gone] = await h.services.declarations.listForTarget(target(VM));
    expect(gone?.outcome).toMatchObject({ kind: "applied", appliedEverywhere: true });
  });

  it("dual stack: ipVersion IPv6 picks each NIC's IPv6 ip configuration; a pool is never put on two IP versions", async () => {
    const c = h.sim.control;
    await h.send(declare(FLEX, { backendPoolId: V6_POOL, ipVersion: "IPv6" }));
    await h.send(declare(FLEX));
    await h.drain();
    for (const nic of flexNics())
      expect(nicPoolsByIpConfig(c.resource(nic) as JsonObject)).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [v6] });
    expect(poolsByIpConfig(modelNics(c.resource(FLEX) as JsonObject))).toEqual({
      ipConfig0: [pool],
      "ipConfig0-v6": [v6],
    });

    // The IPv4 pool asked for on the IPv6 ip configuration: refused with the reason, nothing written.
    c.resetStats();
    await h.send(declare(FLEX, { ipConfiguration: "ipConfig0-v6" }));
    await h.drain();
    const decls = await h.services.declarations.listForTarget(target(FLEX));
    const clash = decls.find((d) => d.ipConfiguration === "ipConfig0-v6");
    expect(clash?.outcome.kind).toBe("failed");
    expect(clash?.outcome.reason).toMatch(/already on IPv4 ip configuration .*ipConfig0.*two IP versions/);
    expect(c.stats().nicPuts + c.stats().puts).toBe(0);

    // A VM without an IPv6 ip configuration: refused with the reason.
    await h.send(declare(VM, { backendPoolId: V6_POOL, ipVersion: "IPv6" }));
    await h.drain();
    const [vmDecl] = await h.services.declarations.listForTarget(target(VM));
    expect(vmDecl?.outcome.kind).toBe("failed");
    expect(vmDecl?.outcome.reason).toMatch(/has no IPv6 ip configuration/);
  });

  it("refuses a Uniform scale set's VM as a target, and an orchestration mode it does not know", async () => {
    await h.send(declare(`${DEMO.scaleSetId}/virtualMachines/0`));
    await h.drain();
    const poison = await h.poisonMessages();
    expect(poison[0]?.reason).toMatch(/^targetId: is a VM of a Uniform scale set/);

    h.sim.control.write(FLEX, (r) => {
      (r["properties"] as JsonObject)["orchestrationMode"] = "Hybrid";
    });
    await h.send(declare(FLEX));
    await h.drain();
    const [decl] = await h.services.declarations.listForTarget(target(FLEX));
    expect(decl?.outcome).toMatchObject({
      kind: "refused",
      reason: 'orchestrationMode "Hybrid" is not one poolsync knows (Uniform, Flexible)',
    });
  });
});
