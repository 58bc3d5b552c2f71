// Network RP's one operation at a time per resource and its transient failures: a NIC write while another write to it
// runs answers 409 AnotherOperationInProgress (any writer, the control API's too); a write referencing a resource NRP
// is updating, and a seeded share of writes, answer 429 RetryableError with Retry-After.
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { ArmError } from "../../sim/errors";
import { NrpOperationLocks } from "../../sim/nrpOperations";
import { Operations } from "../../sim/operations";
import { SimClock } from "../../sim/clock";
import { arm, RG_PATH, SUB } from "./testkit";

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
    expect(second.body).toEqual({
      error: {
        code: "AnotherOperationInProgress",
        message: `Another operation on this or dependent resource is in progress. To retrieve status of the operation use uri: https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.Network/locations/eastus2/operations/${opId}?api-version=2026-01-01.`,
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

describe("NrpOperationLocks (the module every NRP resource's writes share)", () => {
  it("holds a resource for its operation: 409 on it, 429 ReferencedResourceNotProvisioned on what references it, free once it ended", () => {
    const clock = new SimClock(1);
    const ops = new Operations(clock);
    const locks = new NrpOperationLocks();
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
});
