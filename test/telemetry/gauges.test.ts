import { AggregationTemporality } from "@opentelemetry/sdk-metrics";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  GAUGE_LIFETIME_MS,
  resetGauges,
  setBudgetRemaining,
  setGaugeClock,
  setOldestPendingAge,
  setQueueDepth,
  setTimerLastSuccess,
} from "../../src/telemetry/gauges";
import { startInMemoryTelemetry } from "../support/otel";

const SUB = "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d"; // made up
let otel: ReturnType<typeof startInMemoryTelemetry>;
let now = 0;

beforeEach(() => {
  otel = startInMemoryTelemetry(AggregationTemporality.DELTA);
  resetGauges();
  now = 1_000_000;
  setGaugeClock(() => now);
});
afterEach(async () => {
  resetGauges();
  await otel.stop();
});

const values = async (name: string) => (await otel.points(name)).map((p) => [p.value, p.attributes]);

describe("gauges", () => {
  it("reports the last value seen per bucket and subscription", async () => {
    setBudgetRemaining("subscription-writes", SUB, 180);
    setBudgetRemaining("subscription-writes", SUB, 170);
    setBudgetRemaining("GetVMScaleSet3Min", SUB, 150);
    expect(await values("poolsync.arm.budget.remaining")).toEqual([
      [170, { bucket: "subscription-writes", subscription: SUB }],
      [150, { bucket: "GetVMScaleSet3Min", subscription: SUB }],
    ]);
  });

  it("stops reporting a value not seen again within its lifetime, and reports it again once seen", async () => {
    setBudgetRemaining("subscription-reads", SUB, 11_000);
    now += GAUGE_LIFETIME_MS;
    expect(await values("poolsync.arm.budget.remaining")).toHaveLength(1);
    now += 1;
    expect(await values("poolsync.arm.budget.remaining")).toEqual([]);
    setBudgetRemaining("subscription-reads", SUB, 10_999);
    expect(await values("poolsync.arm.budget.remaining")).toEqual([
      [10_999, { bucket: "subscription-reads", subscription: SUB }],
    ]);
  });

  it("reports to a meter provider registered after its first value", async () => {
    setQueueDepth(3);
    await otel.stop();
    otel = startInMemoryTelemetry(AggregationTemporality.DELTA);
    setQueueDepth(4);
    expect(await values("poolsync.queue.depth")).toEqual([[4, {}]]);
  });

  it("reports ages and times in whole seconds, a pending age never below zero", async () => {
    setOldestPendingAge(-3_000);
    setTimerLastSuccess(1_700_000_000_999);
    expect(await values("poolsync.declaration.oldest_pending_age")).toEqual([[0, {}]]);
    expect(await values("poolsync.timer.last_success")).toEqual([[1_700_000_000, {}]]);
  });
});
