// Azure's buckets at their published sizes, each spent request by request over HTTP until the simulator refuses the
// next one as Azure does: Network RP's 1,000 writes in 5 minutes, CRP's high-cost LIST windows (180 in 3 minutes,
// 1,800 in 30) and ARM's subscription read bucket (15 principals' 250). Thousands of requests by design, so this file
// runs with `npm test` and not in the fast loop (LARGE_BY_DESIGN in vitest.config.mts). test/sim/budgets.test.ts and
// test/sim/strict.test.ts hold the rest of the simulator's budget rules.
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { arm, LB_PATH, RG_PATH, VMSS_PATH } from "./testkit";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});
async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({ seed: "demo", operationDurationMs: 0, ...opts });
  return sim;
}

const NIC = `${RG_PATH}/providers/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const jwt = (claims: Record<string, string>) => `h.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`;

describe("Network RP's budget", () => {
  it("refuses the 1,001st write in 5 minutes of a subscription and region with NRP's 429 RetryableError and Retry-After", async () => {
    const s = await start({ throttling: { timeScale: 0.0001, arm: false } });
    const body = (await arm(s.url, "GET", NIC)).body;
    for (let i = 0; i < 1000; i += 100)
      await Promise.all(
        Array.from({ length: 100 }, async () => expect((await arm(s.url, "PUT", NIC, { body })).status).toBe(200)),
      );
    const refused = await arm(s.url, "PUT", NIC, { body });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: {
        code: "RetryableError",
        message: "A retryable error occurred.",
        details: [
          {
            code: "RetryableErrorDueToTooManyCallsToThisOperation",
            message: expect.stringMatching(
              /^Operation PutNetworkInterfaceOperation exceeded throttling limit of 1000 calls within last 5 minutes\. .* The call can be retried in \d+ seconds\.$/,
            ),
          },
        ],
      },
    });
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(300);
    // Reads have their own budget (10,000), and the window gives the writes back.
    expect((await arm(s.url, "GET", NIC)).status).toBe(200);
    s.control.clock.advance(wait * 1000);
    expect((await arm(s.url, "PUT", NIC, { body })).status).toBe(200);
  }, 60_000);

  it("tracks NRP's budget but never refuses with throttling off", async () => {
    const s = await start();
    const body = (await arm(s.url, "GET", NIC)).body;
    for (let i = 0; i < 1010; i += 101)
      await Promise.all(Array.from({ length: 101 }, () => arm(s.url, "PUT", NIC, { body })));
    expect((await arm(s.url, "PUT", NIC, { body })).status).toBe(200);
  }, 60_000);
});

describe("CRP's high-cost windows and ARM's principals", () => {
  it("answers 429 naming every empty bucket, with Retry-After as CRP computes it (until every empty window turns)", async () => {
    // Simulated time nearly stands still while the buckets are emptied, so nothing refills in between; ARM's own
    // read bucket (250) is left out here.
    const s = await start({ throttling: { timeScale: 0.0001, arm: false } });
    const list = () => arm(s.url, "GET", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets`);
    const drain = async (n: number) => {
      for (let i = 0; i < n; i += 90) await Promise.all(Array.from({ length: Math.min(90, n - i) }, list));
    };
    // 180 in 3 minutes (aks-engine issue 2295).
    await drain(180);
    const short = await list();
    expect(short.status).toBe(429);
    expect(short.body.details.map((d: { target: string }) => d.target)).toEqual(["HighCostGetVMScaleSet3Min"]);
    expect(Number(short.headers.get("retry-after"))).toBeLessThanOrEqual(180);
    // The 30-minute window (1,800, as the 2026 AKS article's 429 shows it) is spent by the tenth full 3-minute window.
    for (let w = 0; w < 9; w++) {
      s.control.clock.advance(180_000);
      await drain(180);
    }
    const long = await list();
    expect(long.status).toBe(429);
    expect(long.body.details.map((d: { target: string }) => d.target)).toEqual([
      "HighCostGetVMScaleSet3Min",
      "HighCostGetVMScaleSet30Min",
    ]);
    expect(JSON.parse(long.body.details[1].message)).toMatchObject({
      operationGroup: "HighCostGetVMScaleSet30Min",
      allowedRequestCount: 1800,
    });
    // 27 simulated minutes in: both windows turn at the 30th.
    const wait = Number(long.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(170);
    expect(wait).toBeLessThanOrEqual(180);
    s.control.clock.advance(wait * 1000);
    expect((await list()).status).toBe(200);
  }, 60_000);

  it("keys ARM's buckets by principal (JWT oid, else appid, else the token), under a 15x cap for the subscription", async () => {
    // The load balancer: a read ARM counts that has no CRP bucket of its own to refuse it first.
    const s = await start({ throttling: { timeScale: 0.0001 } });
    const get = (token: string) => arm(s.url, "GET", LB_PATH, { token });
    const reads = (r: { headers: Headers }) => Number(r.headers.get("x-ms-ratelimit-remaining-subscription-reads"));
    expect(reads(await get(jwt({ oid: "a", appid: "x" })))).toBe(249);
    expect(reads(await get(jwt({ oid: "a", appid: "y" })))).toBe(248); // same object ID: same principal
    expect(reads(await get(jwt({ appid: "x" })))).toBe(249);
    expect(reads(await get("opaque"))).toBe(249);
    const w = await arm(s.url, "PATCH", VMSS_PATH, { token: "opaque", body: { tags: { a: "1" } } });
    expect(w.headers.get("x-ms-ratelimit-remaining-subscription-writes")).toBe("199");
    expect(
      (await arm(s.url, "GET", `${VMSS_PATH}-nope`, { token: "opaque" })).headers.get(
        "x-ms-ratelimit-remaining-subscription-reads",
      ),
    ).toBe("248");
    // 15 principals' worth of reads (3,750, five already spent) empties the subscription's bucket.
    for (let p = 0; p < 15; p++) {
      const token = jwt({ oid: `p${p}` });
      const n = 250;
      for (let i = 0; i < n; i += 125)
        await Promise.all(Array.from({ length: Math.min(125, n - i) }, () => get(token)));
    }
    const fresh = await get(jwt({ oid: "newcomer" }));
    expect(fresh.status).toBe(429);
    expect(fresh.body.error.code).toBe("SubscriptionRequestsThrottled");
  }, 60_000);
});
