import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { armEdgeOptions, checkedWriteFlight } from "../../src/app/armEdges";
import { azuriteConfig } from "../support/appConfig";
import { manualClock, SIM_CA_FILE } from "../support/harness";

const config = azuriteConfig;

describe("the ARM edges as the settings describe them", () => {
  it("lets a write be in flight for the ARM request timeout, on the app's clock", () => {
    const c = config({ POOLSYNC_ARM_TIMEOUT_SECONDS: "20", POOLSYNC_RECONCILE_LEASE_SECONDS: "60" });
    expect(checkedWriteFlight(c, 1)).toBe(20_000);
    expect(checkedWriteFlight(c, 1.5)).toBe(30_000);
  });

  it("refuses a lease shorter than two request timeouts, naming both settings", () => {
    const c = config({ POOLSYNC_ARM_TIMEOUT_SECONDS: "31", POOLSYNC_RECONCILE_LEASE_SECONDS: "60" });
    expect(() => checkedWriteFlight(c, 1)).toThrow(
      /^POOLSYNC_RECONCILE_LEASE_SECONDS: 60 s is shorter than twice the ARM request timeout \(POOLSYNC_ARM_TIMEOUT_SECONDS, 31 s on this clock\)/,
    );
    expect(() => checkedWriteFlight(config({ POOLSYNC_ARM_TIMEOUT_SECONDS: "30" }), 1)).not.toThrow();
  });

  it("gives both edges the endpoint, the extra CA's text, the timeouts and the operation polling", () => {
    const clock = manualClock();
    const c = config({
      ARM_ENDPOINT: "https://127.0.0.1:8443",
      POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
      POOLSYNC_ARM_CREDENTIAL: "static",
      POOLSYNC_ARM_TIMEOUT_SECONDS: "12",
    });
    const o = armEdgeOptions(c, clock);
    expect(o).toMatchObject({
      endpoint: "https://127.0.0.1:8443",
      ca: readFileSync(SIM_CA_FILE, "utf8"),
      requestTimeoutMs: 12_000,
      operationMaxWaitMs: c.operationMaxWaitMs,
      operationPollIntervalMs: c.operationPollMs,
      clock,
    });
    expect(armEdgeOptions(config({ POOLSYNC_ARM_CREDENTIAL: "static" }), clock)).not.toHaveProperty("ca");
  });
});
