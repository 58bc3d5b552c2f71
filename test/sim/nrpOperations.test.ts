// Network RP's one operation at a time per resource and its transient failures: a NIC, load balancer, pool or gateway
// write while another write to it runs answers 409 AnotherOperationInProgress (any writer, the control API's too); a
// write referencing a resource NRP is updating, and a seeded share of writes, answer 429 RetryableError with
// Retry-After. One lock serves them all (sim/nrpOperations.ts).
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { ArmError } from "../../sim/errors";
import { NrpOperationLocks } from "../../sim/nrpOperations";
import { Operations } from "../../sim/operations";
import { SimClock } from "../../sim/clock";
import { arm, RG_PATH, SUB } from "./testkit";
import * as kinds from "./poolKindsWorld";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});
async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({ seed: "demo", ...opts });
  return sim;
}
const NIC = `${RG_PATH}/providers/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const LB = `${RG_PATH}/providers/Microsoft.Network/loadBalancers/etag-k8s`;
const tagged = (body: Record<string, unknown>, tag: string) => ({ ...body, tags: { t: tag } });

describe("a write while another write to the same NIC runs", () => {
  it("answers NRP's 409 AnotherOperationInProgress naming the running operation, then takes the write once it ended", async () => {
    const s = await start({ nicWriteAsync: true, operationDurationMs: 60_000 });
    const read = await arm(s.url, "GET", NIC);
    const first = await arm(s.url, "PUT", NIC, { body: tagged(read.body, "1") });
    expect(first.status).toBe(200);
    const opId = /operations\/([^?]+)/.exec(first.headers.get("azure-asyncoperation") ?? "")?.[1];
    const second = await arm(s.url, "PUT", NIC, {
      body: tagged(read.body, "2"),
      headers: { "if-match": first.headers.get("etag") ?? "" },
    });
    expect(second.status).toBe(409);
    // The running operation's URL as its own answer gave it (Azure-AsyncOperation).
    expect(first.headers.get("azure-asyncoperation")).toBe(
      `${s.url}/subscriptions/${SUB}/providers/Microsoft.Network/locations/eastus2/operations/${opId}?api-version=2026-01-01`,
    );
    expect(second.body).toEqual({
      error: {
        code: "AnotherOperationInProgress",
        message: `Another operation on this or dependent resource is in progress. To retrieve status of the operation use uri: ${s.url}/subscriptions/${SUB}/providers/Microsoft.Network/locations/eastus2/operations/${opId}?api-version=2026-01-01.`,
        details: [],
      },
    });
    expect((s.control.resource(NIC)?.["tags"] as Record<string, string>)["t"]).toBe("1");
    s.control.settle();
    const third = await arm(s.url, "PUT", NIC, {
      body: tagged(read.body, "3"),
      headers: { "if-match": first.headers.get("etag") ?? "" },
    });
    expect(third.status).toBe(200);
  });

  it("refuses another writer the same way, in-process and over /_sim/write, and the interleaved writer waits for the next write", async () => {
    const s = await start({ nicWriteAsync: true, operationDurationMs: 60_000 });
    const read = await arm(s.url, "GET", NIC);
    expect((await arm(s.url, "PUT", NIC, { body: tagged(read.body, "ours") })).status).toBe(200);
    let refused: unknown;
    try {
      s.control.write(NIC, (r) => {
        r["tags"] = { t: "theirs" };
      });
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(ArmError);
    expect((refused as ArmError).status).toBe(409);
    const overHttp = await fetch(`${s.url}/_sim/write`, {
      method: "POST",
      body: JSON.stringify({ id: NIC, merge: { tags: { t: "theirs" } } }),
    });
    expect(overHttp.status).toBe(409);
    expect(((await overHttp.json()) as { error: { code: string } }).error.code).toBe("AnotherOperationInProgress");
    // The interleaved writer meets the running write too: not applied, kept for the next write.
    const handle = s.control.beforeNextWrite(NIC, (r) => {
      r["tags"] = { t: "interleaved" };
    });
    expect((await arm(s.url, "PUT", NIC, { body: tagged(read.body, "again") })).status).toBe(409);
    expect(handle.applied()).toBe(0);
    s.control.settle();
    const after = await arm(s.url, "PUT", NIC, {
      body: tagged(read.body, "later"),
      headers: { "if-match": String(s.control.resource(NIC)?.["etag"]) },
    });
    expect(handle.applied()).toBe(1);
    // Its write came just before ours: ours met its ETag.
    expect(after.status).toBe(412);
  });
});

describe("RetryableError", () => {
  it("fails the seeded share of NRP writes with 429 RetryableError and Retry-After, changing nothing, the same ones for the same seed", async () => {
    const outcomes = async (randomSeed: number) => {
      const s = await start({ nrpTransientFailureRate: 0.5, randomSeed, nrpRetryAfterSeconds: 7 });
      const read = await arm(s.url, "GET", NIC);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const before = s.control.resource(NIC)?.["etag"];
        const r = await arm(s.url, "PUT", NIC, { body: tagged(read.body, String(i)) });
        statuses.push(r.status);
        if (r.status === 429) {
          expect(r.body).toEqual({
            error: { code: "RetryableError", message: "A retryable error occurred.", details: [] },
          });
          expect(r.headers.get("retry-after")).toBe("7");
          expect(s.control.resource(NIC)?.["etag"]).toBe(before);
        }
      }
      // Reads are never failed.
      expect((await arm(s.url, "GET", NIC)).status).toBe(200);
      await s.stop();
      sim = undefined;
      return statuses;
    };
    const a = await outcomes(11);
    expect(a.filter((x) => x === 429).length).toBeGreaterThan(3);
    expect(a.filter((x) => x === 200).length).toBeGreaterThan(3);
    expect(await outcomes(11)).toEqual(a);
  });
});

describe("load balancer, pool and gateway writes take the lock NIC writes take", () => {
  const V = "?api-version=2024-07-01";
  const slow = { loadBalancerWriteMs: 60_000, appGatewayWriteMs: 60_000, nrpRetryAfterSeconds: 9 };
  const world = async (opts: ArmSimulatorOptions = {}) => start({ seed: kinds.WORLD, ...opts });
  const nicJoining = (nic: Record<string, unknown>, pool: string) => {
    const body = structuredClone(nic) as {
      properties: { ipConfigurations: { properties: Record<string, unknown> }[] };
    };
    const ipc = body.properties.ipConfigurations[0]!.properties;
    ipc["loadBalancerBackendAddressPools"] = [{ id: pool }];
    return body;
  };

  it("a NIC write naming a pool of a load balancer being written meets NRP's 429 ReferencedResourceNotProvisioned, then goes through once the write ended", async () => {
    const s = await world(slow);
    const nic = (await arm(s.url, "GET", `${kinds.VM_NIC}${V}`)).body;
    const pool = await arm(s.url, "PUT", `${kinds.EMPTY_POOL}${V}`, { body: { properties: {} } });
    expect(pool.status).toBe(200);
    const refused = await arm(s.url, "PUT", `${kinds.VM_NIC}${V}`, { body: nicJoining(nic, kinds.NIC_POOL) });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("9");
    expect(refused.body.error).toMatchObject({
      code: "RetryableError",
      details: [
        {
          code: "ReferencedResourceNotProvisioned",
          message: expect.stringContaining(`resource ${kinds.LB} used by resource ${kinds.VM_NIC}`),
        },
      ],
    });
    // Another writer meets it too.
    expect(() =>
      s.control.write(kinds.VM_NIC, (r) => {
        r["tags"] = { by: "them" };
      }),
    ).not.toThrow(); // this NIC names no pool of that load balancer
    expect(() => s.control.write(kinds.VM_NIC, (r) => Object.assign(r, nicJoining(r, kinds.NIC_POOL)))).toThrow(
      expect.objectContaining({ status: 429 }),
    );
    s.control.settle();
    const later = await arm(s.url, "PUT", `${kinds.VM_NIC}${V}`, { body: nicJoining(nic, kinds.NIC_POOL) });
    expect(later.status).toBe(200);
    expect(s.control.poolMembers(kinds.NIC_POOL)).toContain(`${kinds.VM_NIC}/ipConfigurations/ipc`);
  });

  it("a NIC write naming a pool of a gateway being written meets the same 429; the gateway's 409 is the NIC's", async () => {
    const s = await world(slow);
    const nic = (await arm(s.url, "GET", `${kinds.VM_NIC}${V}`)).body;
    const agw = (await arm(s.url, "GET", `${kinds.AGW}${V}`)).body;
    const first = await arm(s.url, "PUT", `${kinds.AGW}${V}`, { body: agw });
    expect(first.status).toBe(200);
    // The VM's NIC is in the gateway's pool "web": any write of it now names the gateway being written.
    const refused = await arm(s.url, "PUT", `${kinds.VM_NIC}${V}`, { body: nic });
    expect([refused.status, refused.body.error.details[0].code]).toEqual([429, "ReferencedResourceNotProvisioned"]);
    expect(refused.body.error.details[0].message).toContain(`resource ${kinds.AGW} used by resource ${kinds.VM_NIC}`);
    const second = await arm(s.url, "PUT", `${kinds.AGW}${V}`, { body: agw });
    expect(second.body).toEqual({
      error: {
        code: "AnotherOperationInProgress",
        message: `Another operation on this or dependent resource is in progress. To retrieve status of the operation use uri: ${first.headers.get("azure-asyncoperation")}.`,
        details: [],
      },
    });
    s.control.settle();
    expect((await arm(s.url, "PUT", `${kinds.VM_NIC}${V}`, { body: nic })).status).toBe(200);
  });

  it("a NIC write being written does not hold its pool's load balancer: only what it references waits, not what references it", async () => {
    const s = await world({ ...slow, nicWriteAsync: true, operationDurationMs: 60_000 });
    const nic = (await arm(s.url, "GET", `${kinds.VM_NIC}${V}`)).body;
    expect((await arm(s.url, "PUT", `${kinds.VM_NIC}${V}`, { body: nicJoining(nic, kinds.NIC_POOL) })).status).toBe(
      200,
    );
    // The NIC is held (409 for it), the load balancer is not.
    expect((await arm(s.url, "PUT", `${kinds.VM_NIC}${V}`, { body: nic })).status).toBe(409);
    expect((await arm(s.url, "PUT", `${kinds.EMPTY_POOL}${V}`, { body: { properties: {} } })).status).toBe(200);
  });

  it("the interleaved writer meets a running pool write as any writer does: its change waits for the next write", async () => {
    const s = await world(slow);
    expect((await arm(s.url, "PUT", `${kinds.EMPTY_POOL}${V}`, { body: { properties: {} } })).status).toBe(200);
    const handle = s.control.beforeNextWrite(kinds.IP_POOL, (r) => {
      (r["properties"] as Record<string, unknown>)["loadBalancerBackendAddresses"] = [];
    });
    const blocked = await arm(s.url, "PUT", `${kinds.IP_POOL}${V}`, { body: { properties: {} } });
    expect([blocked.status, blocked.body.error.code]).toEqual([409, "AnotherOperationInProgress"]);
    expect(handle.applied()).toBe(0);
    expect(s.control.poolState(kinds.IP_POOL)?.addresses.map((a) => a.name)).toEqual(["a1", "a2"]);
    s.control.settle();
    const pool = (await arm(s.url, "GET", `${kinds.IP_POOL}${V}`)).body;
    const late = await arm(s.url, "PUT", `${kinds.IP_POOL}${V}`, { body: pool, headers: { "if-match": pool.etag } });
    // Its write came and went just before ours (it holds nothing): ours met its ETag.
    expect(handle.applied()).toBe(1);
    expect(late.status).toBe(412);
    expect(s.control.poolState(kinds.IP_POOL)?.addresses).toEqual([]);
  });
});

describe("NrpOperationLocks (the module every NRP resource's writes share)", () => {
  it("holds a resource for its operation: 409 on it, 429 ReferencedResourceNotProvisioned on what references it, free once it ended", () => {
    const clock = new SimClock(1);
    const ops = new Operations(clock);
    const locks = new NrpOperationLocks(ops);
    const op = ops.start(
      { subscriptionId: "s", location: "eastus2", resourceId: LB, durationMs: 1000 },
      () => undefined,
    );
    locks.hold(LB, op);
    expect(() => locks.check(LB.toUpperCase())).toThrow(
      expect.objectContaining({
        status: 409,
        body: expect.objectContaining({ error: expect.objectContaining({ code: "AnotherOperationInProgress" }) }),
      }),
    );
    let refused: ArmError | undefined;
    try {
      locks.check(NIC, [LB], 12);
    } catch (e) {
      refused = e as ArmError;
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers["retry-after"]).toBe("12");
    expect(refused?.body).toMatchObject({
      error: {
        code: "RetryableError",
        details: [
          {
            code: "ReferencedResourceNotProvisioned",
            message: expect.stringContaining(`resource ${LB} used by resource ${NIC}`),
          },
        ],
      },
    });
    clock.advance(1000);
    expect(() => locks.check(LB, [])).not.toThrow();
    expect(() => locks.check(NIC, [LB])).not.toThrow();
    clock.stop();
  });

  it("lets a load balancer write supersede a running write of one of its pools (cancelled, the text NRP gives), and with supersede any running write", () => {
    const clock = new SimClock(1);
    const ops = new Operations(clock);
    const locks = new NrpOperationLocks(ops);
    const start = () =>
      ops.start({ subscriptionId: "s", location: "eastus2", resourceId: LB, durationMs: 1000 }, () => undefined);
    const poolWrite = start();
    locks.admit(LB, { name: "PutLoadBalancerBackendAddressPoolOperation", child: true })(poolWrite);
    // Another pool write meets it: 409.
    expect(() => locks.admit(LB, { name: "DeleteLoadBalancerBackendAddressPoolOperation", child: true })).toThrow(
      expect.objectContaining({ status: 409 }),
    );
    // The load balancer's own write supersedes it.
    const admitted = locks.admit(LB, { name: "PutLoadBalancerOperation" });
    const lbWrite = start();
    admitted(lbWrite);
    expect(poolWrite.status).toBe("Canceled");
    expect(poolWrite.error).toEqual({
      code: "Canceled",
      message: "Operation was canceled.",
      details: [
        {
          code: "CanceledAndSupersededDueToAnotherOperation",
          message: `Operation PutLoadBalancerBackendAddressPoolOperation (${poolWrite.id}) was canceled and superseded by operation PutLoadBalancerOperation (${lbWrite.id}).`,
        },
      ],
    });
    expect(locks.writesOn(LB.toUpperCase())).toEqual([{ operationId: lbWrite.id, name: "PutLoadBalancerOperation" }]);
    // A pool write does not supersede its load balancer's, unless every write supersedes.
    expect(() => locks.admit(LB, { name: "PutLoadBalancerBackendAddressPoolOperation", child: true })).toThrow(
      expect.objectContaining({ status: 409 }),
    );
    const next = start();
    locks.admit(LB, { name: "PutLoadBalancerBackendAddressPoolOperation", child: true }, { supersede: true })(next);
    expect(lbWrite.status).toBe("Canceled");
    expect(next.status).toBe("InProgress");
    clock.stop();
  });
});
