import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import { ADDRESS_NAME_MARK } from "../../src/core/ipPoolAddresses";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import { KINDS } from "../../devkit/poolKindWorld";
import type { Harness } from "../support/harness";
import { addsAddress, startKindsHarness } from "../support/kindsHarness";

/**
 * IP-based load balancer pools (issue 43) through the real edges: Azurite, the simulator, the real Network SDK. The
 * pool lists the members' addresses itself, written with If-Match on the load balancer's ETag; another writer's
 * addresses survive every write, and what poolsync adds carries its own names.
 */

const target = (id: string): TargetRef => {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};
let seq = 0;
function declaration(targetId: string, pool: string, state: "present" | "absent", extra: Partial<Declaration> = {}) {
  return {
    scaleSetId: targetId,
    backendPoolId: pool,
    ipConfiguration: "",
    state,
    declaredAt: new Date(Date.now() + seq).toISOString(),
    requestId: `d${++seq}`,
    declaredBy: QUEUE_DECLARER,
    ...extra,
  } satisfies Declaration;
}

const addresses = (h: Harness, pool = KINDS.ipPool) => h.sim.control.poolState(pool)?.addresses ?? [];
const ours = (h: Harness, pool = KINDS.ipPool) =>
  addresses(h, pool).filter((a) => a.name?.startsWith(ADDRESS_NAME_MARK));

async function pass(h: Harness, id: string) {
  const report = await h.services.reconcile(target(id), { reason: "test", attempt: 0 });
  h.sim.control.settle();
  return report;
}

async function declareAndPass(h: Harness, d: Declaration) {
  await h.services.declarations.upsert(target(d.scaleSetId), d);
  return pass(h, d.scaleSetId);
}

const stored = async (h: Harness, id: string) => h.services.declarations.listForTarget(target(id));

describe("IP-based pools (issue 43)", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const start = (opts: { capacity?: number; vms?: number } = {}, env: Record<string, string> = {}) =>
    startKindsHarness({ POOLSYNC_GATHER_MILLISECONDS: "0", ...env }, opts);

  it("puts every instance's private address in the pool, keeps another writer's, and takes only its own out", async () => {
    h = await start({ capacity: 3 });
    h.sim.control.writePoolAddresses(KINDS.ipPool, {
      add: [{ name: "by-hand", ipAddress: "10.1.200.1", subnet: KINDS.subnet }],
    });
    h.sim.control.settle();
    const report = await declareAndPass(h, declaration(KINDS.scaleSet, KINDS.ipPool, "present"));
    expect(report.result).toBe("applied");
    expect(addresses(h).map((a) => a.name)).toContain("by-hand");
    const mine = ours(h);
    expect(mine).toHaveLength(3);
    // The scale set's own model and instances are not written: the pool lists the addresses.
    expect(h.sim.control.stats(KINDS.scaleSet).puts).toBe(0);
    const [d] = await stored(h, KINDS.scaleSet);
    expect(d?.outcome).toMatchObject({ kind: "applied", appliedEtag: h.sim.control.poolState(KINDS.ipPool)?.etag });

    // Scale out and in: the next pass (an instance event's, the timer's) follows.
    h.sim.control.scale(KINDS.scaleSet, 4);
    h.sim.control.settle();
    await pass(h, KINDS.scaleSet);
    expect(ours(h)).toHaveLength(4);
    h.sim.control.scale(KINDS.scaleSet, 2);
    h.sim.control.settle();
    await pass(h, KINDS.scaleSet);
    expect(ours(h)).toHaveLength(2);

    await declareAndPass(h, declaration(KINDS.scaleSet, KINDS.ipPool, "absent"));
    expect(ours(h)).toEqual([]);
    expect(addresses(h).map((a) => a.name)).toEqual(["by-hand"]);
    const [gone] = await stored(h, KINDS.scaleSet);
    expect(gone?.outcome).toMatchObject({ kind: "applied", appliedEverywhere: true });
  });

  it("a classic pool is IP-based by its first address; poolsync's addresses name their virtual network there", async () => {
    h = await start();
    const report = await declareAndPass(h, declaration(KINDS.vm(1), KINDS.classicIpPool, "present"));
    expect(report.result).toBe("applied");
    expect(addresses(h, KINDS.classicIpPool)).toEqual([
      expect.objectContaining({ name: "by-hand", ipAddress: "10.1.200.9" }),
      expect.objectContaining({ name: expect.stringMatching(/^poolsync-/), virtualNetwork: KINDS.vnet }),
    ]);
    // The VM's NIC was not written: the pool lists the address.
    expect(h.sim.control.stats().nicPuts).toBe(0);
  });

  it("a write that meets another writer's change (412) reads again and keeps both", async () => {
    h = await start();
    h.sim.control.beforeNextWrite(KINDS.ipPool, addsAddress("their-node", "10.1.200.2", KINDS.subnet));
    const report = await declareAndPass(h, declaration(KINDS.vm(0), KINDS.ipPool, "present"));
    expect(report.preconditionFailures).toBe(1);
    expect(addresses(h).map((a) => a.name)).toContain("their-node");
    expect(ours(h)).toHaveLength(1);
  });

  it("a burst of declarations on one pool from many targets makes one pool write", async () => {
    // The passes hand in their shares over some hundreds of milliseconds, and on a machine at load 15 two of them
    // came more than 500 ms apart (two writes, once): the gather waits 2 s without a new share, at most a declare
    // window (5 s).
    h = await start({ vms: 12 }, { POOLSYNC_GATHER_MILLISECONDS: "2000", POOLSYNC_DECLARE_WINDOW_SECONDS: "5" });
    const vms = Array.from({ length: 12 }, (_, i) => KINDS.vm(i));
    for (const vm of vms) await h.services.declarations.upsert(target(vm), declaration(vm, KINDS.ipPool, "present"));
    h.sim.control.resetStats();
    const reports = await Promise.all(vms.map((vm) => h!.services.reconcile(target(vm), { reason: "t", attempt: 0 })));
    expect(reports.map((r) => r.result)).toEqual(vms.map(() => "applied"));
    expect(h.sim.control.stats(KINDS.loadBalancer).networkPuts).toBe(1);
    expect(ours(h)).toHaveLength(12);
    for (const vm of vms) expect((await stored(h, vm))[0]?.outcome.kind).toBe("applied");
  });

  it("sets the declared admin state per instance, and repairs and records it when someone sets it back", async () => {
    h = await start({ capacity: 3 });
    await declareAndPass(
      h,
      declaration(KINDS.scaleSet, KINDS.ipPool, "present", { adminState: "Down", adminInstances: ["1"] }),
    );
    const byName = () => new Map(ours(h!).map((a) => [a.name!.split("-").pop(), a.adminState]));
    expect(byName().get("1")).toBe("Down");
    expect(byName().get("0")).toBeUndefined();
    const name = ours(h).find((a) => a.name!.endsWith("-1"))!.name!;
    h.sim.control.writePoolAddresses(KINDS.ipPool, { adminState: { [name]: "None" } });
    h.sim.control.settle();
    await pass(h, KINDS.scaleSet);
    expect(byName().get("1")).toBe("Down");
    const drifts = await h.services.drifts.listForTarget(target(KINDS.scaleSet));
    expect([...drifts.values()][0]).toMatchObject({ resourceKind: "pool", resourceId: KINDS.ipPool });
    expect(drifts.size).toBe(1);
  });

  it("an admin state on a NIC-based pool fails with the reason, and nothing is written", async () => {
    h = await start();
    // The pool is NIC-based: an ip configuration joins it first.
    await declareAndPass(h, declaration(KINDS.scaleSet, KINDS.nicPool, "present"));
    await declareAndPass(h, declaration(KINDS.vm(0), KINDS.nicPool, "present", { adminState: "Down" }));
    const [d] = await stored(h, KINDS.vm(0));
    expect(d?.outcome).toMatchObject({ kind: "failed", reason: expect.stringContaining("adminState:") });
  });
});

describe("the plan of an IP-based pool (issue 43)", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("plans one pool write with the addresses it would add, on the pool's ETag; a dry run writes nothing", async () => {
    h = await startKindsHarness({ POOLSYNC_GATHER_MILLISECONDS: "0" }, { capacity: 2 });
    await h.services.declarations.upsert(
      target(KINDS.scaleSet),
      declaration(KINDS.scaleSet, KINDS.ipPool, "present", { adminState: "Down" }),
    );
    h.sim.control.resetStats();
    const plan = await h.services.plan(target(KINDS.scaleSet));
    expect(plan.writes).toEqual([
      {
        kind: "pool",
        id: KINDS.ipPool,
        ifMatch: h.sim.control.poolState(KINDS.ipPool)?.etag,
        ipConfigurations: [],
        addresses: {
          gain: [expect.stringMatching(/^10\.1\.0\.4 \(poolsync-/), expect.stringMatching(/^10\.1\.0\.5 \(poolsync-/)],
          lose: [],
        },
        basedOn: { source: "arm", ageMs: 0 },
      },
    ]);
    expect(h.sim.control.stats().networkPuts).toBe(0);
    expect(ours(h)).toEqual([]);
  });
});
