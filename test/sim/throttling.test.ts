// CRP's token buckets as its answers name them: a burst of 12 writes per scale set, then 4 a minute; 429 with
// Retry-After in simulated time, naming every empty bucket.
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { arm, VMSS_PATH, instanceChange } from "./testkit";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function start(opts: ArmSimulatorOptions): Promise<ArmSimulator> {
  // Operations end at once: each write meets the last one's ETag, never its operation (409).
  // The header names of the earlier recordings (`<Policy>Resource`, `<Policy>SubscriptionMaximum`); strict.test.ts
  // covers the published window names, the default.
  sim = await startArmSimulator({
    seed: "demo",
    operationDurationMs: 0,
    rateLimitPolicyNames: "resourceSubscription",
    ...opts,
  });
  return sim;
}

const write = (s: ArmSimulator, n: number) => arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { n: String(n) } } });

describe("throttling", () => {
  it("answers the 13th quick write with 429 and a Retry-After that, once waited (simulated), lets the next through", async () => {
    const s = await start({ throttling: true });
    for (let i = 1; i <= 12; i++) {
      const r = await write(s, i);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ms-ratelimit-remaining-resource")).toBe(
        `Microsoft.Compute/CreateVMScaleSetSubscriptionMaximum;${1500 - i},Microsoft.Compute/CreateVMScaleSetResource;${12 - i}`,
      );
    }
    const refused = await write(s, 13);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body).toMatchObject({
      code: "OperationNotAllowed",
      message: "The server rejected the request because too many requests have been received for this subscription.",
      details: [{ code: "TooManyRequests", target: "CreateVMScaleSetResource" }],
    });
    expect(refused.headers.get("x-ms-ratelimit-remaining-resource")).toContain("CreateVMScaleSetResource;0");
    // Not quite long enough: still refused.
    s.control.clock.advance(retryAfter * 1000 - 1500);
    expect((await write(s, 14)).status).toBe(429);
    s.control.clock.advance(1500);
    expect((await write(s, 15)).status).toBe(200);
    expect(s.control.stats(VMSS_PATH)).toMatchObject({ patches: 15, status429: 2 });
  });

  it("runs simulated minutes in real milliseconds with a time scale", async () => {
    // 60 simulated seconds per real second: the burst (a few ms each) stays within one simulated minute.
    const s = await start({ throttling: { timeScale: 60 } });
    for (let i = 1; i <= 12; i++) expect((await write(s, i)).status).toBe(200);
    const refused = await write(s, 13);
    expect(refused.status).toBe(429);
    const realWaitMs = (Number(refused.headers.get("retry-after")) * 1000) / 60;
    expect(realWaitMs).toBeLessThanOrEqual(1000);
    await new Promise((r) => setTimeout(r, realWaitMs + 20));
    expect((await write(s, 14)).status).toBe(200);
  });

  it("refills continuously when set: one token every 15 s", async () => {
    const s = await start({ throttling: { refill: "continuous" } });
    for (let i = 1; i <= 12; i++) await write(s, i);
    const refused = await write(s, 13);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBe(15);
  });

  it("charges a write that changes nothing 0, so it is never throttled", async () => {
    const s = await start({ throttling: true });
    for (let i = 0; i < 20; i++) {
      const r = await arm(s.url, "PATCH", VMSS_PATH, { body: { properties: { upgradePolicy: { mode: "Manual" } } } });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ms-request-charge")).toBe("0");
    }
    expect((await write(s, 1)).status).toBe(200);
  });

  it("keeps separate buckets per operation kind: reads are not spent by writes", async () => {
    const s = await start({ throttling: true });
    for (let i = 1; i <= 12; i++) await write(s, i);
    expect((await write(s, 13)).status).toBe(429);
    const get = await arm(s.url, "GET", VMSS_PATH);
    expect(get.status).toBe(200);
    expect(get.headers.get("x-ms-ratelimit-remaining-resource")).toBe(
      "Microsoft.Compute/GetVMScaleSetSubscriptionMaximum;2399,Microsoft.Compute/GetVMScaleSetResource;35",
    );
    expect((await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, { body: instanceChange("1") })).status).toBe(200);
  });

  it("tracks but never refuses when throttling is off", async () => {
    const s = await start({});
    for (let i = 1; i <= 14; i++) expect((await write(s, i)).status).toBe(200);
    expect((await write(s, 15)).headers.get("x-ms-ratelimit-remaining-resource")).toContain(
      "CreateVMScaleSetResource;0",
    );
  });
});
