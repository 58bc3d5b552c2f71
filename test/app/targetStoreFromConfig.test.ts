import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import { targetStoreFromConfig } from "../../src/app/targetStoreFromConfig";
import { CLOCK_SKEW_MS, type ControlState } from "../../src/core/control";
import { azuriteConfig } from "../support/appConfig";
import { DEMO, manualClock } from "../support/harness";
import { scaleSetRef } from "../support/refs";

const HOUR = 3_600_000;
const clock = manualClock();
const config = azuriteConfig({ POOLSYNC_RECONCILE_LEASE_SECONDS: "120", POOLSYNC_CACHE_ENABLED: "false" });
const store = targetStoreFromConfig(config, { clock, log: memoryLogger() });
const ref = scaleSetRef(DEMO.scaleSetId);

beforeAll(async () => {
  await store.table.createTable();
});
afterAll(async () => {
  await store.table.deleteTable();
});

/** Writes the control row as `change` makes it, then reads it back as the store decodes it. */
async function roundTrip(change: (s: ControlState) => ControlState): Promise<ControlState> {
  await store.updateControl(ref, (s) => ({ state: change(s), result: undefined }));
  return (await store.readControl(ref)).state;
}

describe("the targets table as the settings describe it", () => {
  it("is the table the settings name, on the clock given, with the cache as the settings switch it", () => {
    expect(store.table.tableName).toBe(config.membershipsTable);
    expect(store.now()).toBe(clock.now());
    expect(store.cacheEnabled).toBe(false);
  });

  it("keeps a lease only as far ahead as POOLSYNC_RECONCILE_LEASE_SECONDS (and the clock skew) allow", async () => {
    const lease = (expiresAt: number) => (s: ControlState) => ({
      ...s,
      lease: { ...s.lease, holder: "h1", expiresAt },
    });
    expect((await roundTrip(lease(clock.now() + 120_000 + CLOCK_SKEW_MS))).lease.holder).toBe("h1");
    expect((await roundTrip(lease(clock.now() + 120_000 + CLOCK_SKEW_MS + 1))).lease.holder).not.toBe("h1");
  });

  it("keeps a requeue no further ahead than a day: one beyond is not one poolsync made", async () => {
    const attempt = (nextAttemptAt: number) => (s: ControlState) => ({
      ...s,
      attempt: { attempt: 2, nextAttemptAt, reason: "429" },
    });
    expect((await roundTrip(attempt(clock.now() + 23 * HOUR))).attempt?.attempt).toBe(2);
    expect((await roundTrip(attempt(clock.now() + 25 * HOUR))).attempt).toBeUndefined();
  });
});
