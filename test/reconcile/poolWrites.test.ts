import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import type { PassEvent } from "../../src/core/history";
import { RefusedError } from "../../src/core/errors";
import { addressName, declarationAddressPrefix, type Contribution } from "../../src/core/ipPoolAddresses";
import { parseBackendPoolId, type BackendPoolRef } from "../../src/core/resourceIds";
import { comeBack } from "../../src/reconcile/passResult";
import { PoolWrites, type PoolShare, type PoolWriteResult } from "../../src/reconcile/poolWrites";
import { WritePacer } from "../../src/pacing/writePacer";
import type { JsonObject } from "../../sim";
import { KINDS } from "../../devkit/poolKindWorld";
import { manualClock, type Harness } from "../support/harness";
import { addsAddress, startKindsHarness } from "../support/kindsHarness";

/**
 * The coalesced writes of IP-based pools, against the simulator through the real Network SDK: the shares of every
 * target declared into one pool make one read and one PUT with If-Match, each share answered with the write; a share
 * handed in while a write runs joins the next; one whose lease lapsed is left out; another writer's addresses stay.
 */

const poolRef = (id: string): BackendPoolRef => {
  const r = parseBackendPoolId(id);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};

let h: Harness;
beforeAll(async () => {
  h = await startKindsHarness();
});
afterAll(async () => {
  await h.stop();
});
beforeEach(() => h.sim.control.resetStats());

/** Pool writes as a process makes them: the harness's Network edge, this test's clock (a gather's sleep moves it). */
function poolWrites(gatherMs = 100) {
  const clock = manualClock();
  const log = memoryLogger();
  let n = 0;
  const writes = new PoolWrites({
    network: h.services.network,
    clock,
    log,
    pacer: new WritePacer(clock.now, false),
    newRequestId: () => `pool-writes-test-${++n}`,
    config: h.config,
    gatherMs,
    maxGatherMs: 10 * gatherMs,
  });
  return { writes, log };
}

/** One target's share: its addresses (one per member) under its own prefix, at made-up IPs of the pool's subnet. */
function share(target: string, members: Record<string, string>, extra: Partial<PoolShare> = {}): PoolShare {
  const prefix = declarationAddressPrefix(target, "");
  const contribution: Contribution = {
    prefix,
    wanted: Object.entries(members).map(([member, ipAddress]) => ({
      name: addressName(prefix, member),
      ipAddress,
      virtualNetworkId: KINDS.vnet,
    })),
  };
  return { targetKey: target, contributions: [contribution], log: memoryLogger(), ...extra };
}

const namesIn = (poolId: string) => (h.sim.control.poolState(poolId)?.addresses ?? []).map((a) => a.name ?? "");
const ipsIn = (poolId: string) => (h.sim.control.poolState(poolId)?.addresses ?? []).map((a) => a.ipAddress ?? "");

describe("IP-based pool writes, coalesced across targets (simulator)", () => {
  it("writes the shares handed in together in one PUT, keeps another writer's address, and counts its calls once", async () => {
    const pool = poolRef(KINDS.ipPool);
    h.sim.control.writePoolAddresses(KINDS.ipPool, {
      add: [{ name: "by-hand", ipAddress: "10.1.200.1", subnet: KINDS.subnet }],
    });
    h.sim.control.settle();
    const { writes, log } = poolWrites();
    const heard = { a: [] as PassEvent[], b: [] as PassEvent[] };
    const shareA = share(
      "target-a",
      { "0": "10.1.1.1", "1": "10.1.1.2" },
      { events: { emit: (e) => heard.a.push(e) } },
    );
    const shareB = share("target-b", { "0": "10.1.2.1" }, { events: { emit: (e) => heard.b.push(e) } });
    const [a, b] = await Promise.all([writes.submit(pool, shareA), writes.submit(pool, shareB)]);

    expect(h.sim.control.stats(KINDS.loadBalancer).networkPuts).toBe(1);
    expect(ipsIn(KINDS.ipPool).sort()).toEqual(["10.1.1.1", "10.1.1.2", "10.1.2.1", "10.1.200.1"]);
    expect(namesIn(KINDS.ipPool)).toContain("by-hand");
    for (const answer of [a, b]) expect(answer).toMatchObject({ wrote: true, model: { etag: expect.any(String) } });
    // Reported by the one share that led the batch, so a sum over the reports counts each call once.
    expect([a, b].map((x) => ("calls" in x ? x.calls : "come back"))).toEqual([
      { reads: 1, writes: 1, preconditionFailures: 0, throttles: 0 },
      undefined,
    ]);
    expect(writes.idle).toBe(true);
    // The write is in each served target's history and log; the process's log hears it through them, not again.
    // Each sees the whole write: the addresses of both targets it added.
    for (const events of [heard.a, heard.b])
      expect(events).toEqual([
        expect.objectContaining({
          kind: "write",
          resourceKind: "pool",
          outcome: "ok",
          pools: expect.arrayContaining([
            expect.stringMatching(/^present:10\.1\.1\.2 /),
            expect.stringMatching(/^present:10\.1\.2\.1 /),
          ]),
        }),
      ]);
    for (const s of [shareA, shareB])
      expect((s.log as ReturnType<typeof memoryLogger>).lines).toEqual([
        expect.objectContaining({ event: "arm.write", outcome: "ok" }),
      ]);
    expect(log.lines).toEqual([]);
  });

  it("writes a share handed in during a write with the next, and a target's later share instead of its earlier", async () => {
    const pool = poolRef(KINDS.ipPool2);
    const { writes } = poolWrites();
    const later: Array<Promise<unknown>> = [];
    // While the first PUT is at the server, two more passes hand in their shares; one of them twice.
    h.sim.control.beforeNextWrite(KINDS.ipPool2, () => {
      later.push(
        writes.submit(pool, share("target-d", { "0": "10.1.4.9" })),
        writes.submit(pool, share("target-d", { "1": "10.1.4.1" })),
        writes.submit(pool, share("target-e", { "0": "10.1.5.1" })),
      );
    });
    const first = await writes.submit(pool, share("target-c", { "0": "10.1.3.1" }));
    const answers = await Promise.all(later);

    // The write that ran held only its own share; the three handed in meanwhile made one write after it, where
    // target-d's later share replaced its earlier one.
    const ips = (answer: unknown) => (answer as PoolWriteResult).model.addresses.map((a) => a.ipAddress).sort();
    expect(first).toMatchObject({ wrote: true });
    expect(ips(first)).toEqual(["10.1.3.1"]);
    expect(answers.map(ips)).toEqual(Array(3).fill(["10.1.3.1", "10.1.4.1", "10.1.5.1"]));
    expect(new Set(answers.map((a) => (a as PoolWriteResult).model.etag)).size).toBe(1);
    expect((answers[0] as PoolWriteResult).calls).toMatchObject({ reads: 1, writes: 1 });
    expect(ipsIn(KINDS.ipPool2).sort()).toEqual(["10.1.3.1", "10.1.4.1", "10.1.5.1"]);
  });

  it("leaves out the share of a pass whose lease lapsed, telling it to come back, and writes the others", async () => {
    const pool = poolRef(KINDS.ipPool);
    const { writes } = poolWrites();
    const lapsed = comeBack("retry", 1_000, "lease lost");
    const [kept, left] = await Promise.all([
      writes.submit(pool, share("target-f", { "0": "10.1.6.1" })),
      writes.submit(
        pool,
        share("target-g", { "0": "10.1.7.1" }, { lease: { ensureHeld: () => Promise.resolve(lapsed) } }),
      ),
    ]);
    expect(kept).toMatchObject({ wrote: true });
    expect(left).toEqual({ comeBack: lapsed });
    expect(ipsIn(KINDS.ipPool)).toContain("10.1.6.1");
    expect(ipsIn(KINDS.ipPool)).not.toContain("10.1.7.1");
  });

  it("meets another writer's change (412) by reading again, and keeps both", async () => {
    const pool = poolRef(KINDS.ipPool);
    const { writes } = poolWrites();
    h.sim.control.beforeNextWrite(KINDS.ipPool, addsAddress("their-node", "10.1.200.2", KINDS.subnet));
    const answer = await writes.submit(pool, share("target-h", { "0": "10.1.8.1" }));
    expect(answer).toMatchObject({ wrote: true, calls: { reads: 2, writes: 2, preconditionFailures: 1 } });
    expect(ipsIn(KINDS.ipPool)).toEqual(expect.arrayContaining(["10.1.200.2", "10.1.8.1"]));
  });

  it("refuses a pool that does not exist, or lists NICs, naming the pool, for every share it served", async () => {
    const { writes } = poolWrites();
    const missing = `${KINDS.loadBalancer}/backendAddressPools/nowhere`;
    await expect(writes.submit(poolRef(missing), share("target-i", { "0": "10.1.9.1" }))).rejects.toEqual(
      new RefusedError(`backend pool ${poolRef(missing).id} does not exist`),
    );
    // A VM's NIC joins the pool by reference (another writer's): the pool lists NICs.
    h.sim.control.write(KINDS.vnet.replace(/virtualNetworks\/vnet$/, "networkInterfaces/vm-0-nic"), (nic) => {
      const [ipc] = (nic["properties"] as JsonObject)["ipConfigurations"] as JsonObject[];
      (ipc!["properties"] as JsonObject)["loadBalancerBackendAddressPools"] = [{ id: KINDS.nicPool2 }];
    });
    h.sim.control.settle();
    const nics = poolRef(KINDS.nicPool2);
    const both = [
      writes.submit(nics, share("target-j", { "0": "10.1.10.1" })),
      writes.submit(nics, share("target-k", { "0": "10.1.11.1" })),
    ];
    for (const answer of both)
      await expect(answer).rejects.toThrow(
        `backend pool ${nics.id} is NIC-based now: its members join through ip configurations`,
      );
    expect(h.sim.control.stats(KINDS.loadBalancer).networkPuts).toBe(0);
  });
});
