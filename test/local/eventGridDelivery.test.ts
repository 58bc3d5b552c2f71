import { describe, expect, it } from "vitest";
import {
  EVENT_TTL_MS,
  planDelivery,
  RETRY_SCHEDULE_MS,
  retryDelayMs,
  retryWithinTtlMs,
} from "../../local/stack/eventGridDelivery";
import { seededRandom } from "../../sim/random";

/** A PRNG that answers the given values in turn (then 0.5). */
const scripted = (values: number[]) => () => values.shift() ?? 0.5;

describe("Event Grid's delivery plan", () => {
  it("follows Event Grid's retry schedule: 10 s, 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, then hourly up to 24 h", () => {
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([10, 30, 60, 300, 600, 1800, 3600]);
    expect(retryDelayMs(7)).toBe(3_600_000);
    expect(retryDelayMs(30)).toBe(3_600_000);
    // 10 s + 30 s + ... + 1 h is about 1 h 47 min; then 22 more hourly steps fit in 24 h, the 23rd does not.
    expect(retryWithinTtlMs(28)).toBe(3_600_000);
    expect(retryWithinTtlMs(29)).toBeUndefined();
  });

  it("retries an attempt the subscriber did not get on that schedule (randomized a little), and stops once received", () => {
    // First attempt at min + 0 × range = 1 s; fails, fails, then received (and acknowledged).
    const plan = planDelivery(scripted([0, 0.01, 0.5, 0.01, 0.5, 0.9, 0.9]), { jitter: 0 });
    expect(plan).toEqual({ receivedAtMs: [1_000 + 10_000 + 30_000], failedAttempts: 2 });
  });

  it("delivers an event twice when its acknowledgement is lost, the second time at the next step", () => {
    const plan = planDelivery(scripted([0, 0.9, 0.05, 0.5, 0.9, 0.9]), { jitter: 0 });
    expect(plan.receivedAtMs).toEqual([1_000, 11_000]);
  });

  it("replays the same plan from the same seed; over many events: every one at least once, some twice, some late, order lost", () => {
    const plans = (seed: number) => {
      const rand = seededRandom(seed);
      return Array.from({ length: 2_000 }, () => planDelivery(rand));
    };
    const a = plans(42);
    expect(plans(42)).toEqual(a);
    expect(plans(43)).not.toEqual(a);
    expect(a.every((p) => p.receivedAtMs.length >= 1 && p.receivedAtMs.every((t) => t <= EVENT_TTL_MS))).toBe(true);
    const twice = a.filter((p) => p.receivedAtMs.length >= 2).length;
    expect(twice).toBeGreaterThan(100);
    expect(twice).toBeLessThan(400);
    // Late: a minute or more after the write for the events whose first attempts failed.
    expect(a.filter((p) => p.receivedAtMs[0]! >= 60_000).length).toBeGreaterThan(10);
    // Published one per second, received out of order.
    const arrivals = a.flatMap((p, i) => p.receivedAtMs.map((t) => ({ i, at: i * 1000 + t })));
    arrivals.sort((x, y) => x.at - y.at);
    const inversions = arrivals.filter((x, k) => k > 0 && x.i < arrivals[k - 1]!.i).length;
    expect(inversions).toBeGreaterThan(100);
  });
});
