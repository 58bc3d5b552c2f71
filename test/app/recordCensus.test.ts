import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { recordCensus } from "../../src/app/recordCensus";
import { targetStoreFromConfig } from "../../src/app/targetStoreFromConfig";
import { CensusSummaryTable } from "../../src/azure/censusSummaryTable";
import { ResourceOwnerTable } from "../../src/azure/resourceOwnerTable";
import { TargetCache } from "../../src/azure/targets/targetCache";
import { azuriteConfig } from "../support/appConfig";
import { DEMO, manualClock } from "../support/harness";
import { scaleSetRef } from "../support/refs";

const clock = manualClock();
const cs = testStorageConnectionString();
const table = (name: string) => TableClient.fromConnectionString(cs, name, { allowInsecureConnection: true });
const config = azuriteConfig({ POOLSYNC_CACHE_ENABLED: "true" });
const store = targetStoreFromConfig(config, { clock, log: memoryLogger() });
const cache = new TargetCache(store, new ResourceOwnerTable(table(uniqueName("owners"))));
const summaries = new CensusSummaryTable(table(uniqueName("summary")));

beforeAll(async () => {
  await Promise.all([store.table.createTable(), summaries.table.createTable()]);
});
afterAll(async () => {
  await Promise.all([store.table.deleteTable(), summaries.table.deleteTable()]);
});

describe("the timer's census of the cache", () => {
  it("saves what it counted, at the clock's time, with the TTL it was counted against", async () => {
    const ref = scaleSetRef(DEMO.scaleSetId);
    const model = {
      id: DEMO.scaleSetId,
      etag: 'W/"1"',
      location: "westeurope",
      provisioningState: "Succeeded",
      capacity: 2,
      nics: [],
    };
    await cache.storeScaleSet(ref, model, undefined);
    await cache.markStale(ref, "event: someone wrote it");
    const log = memoryLogger();
    await recordCensus(cache, summaries, { clock, log, ttlMs: 600_000 });
    expect(log.lines).toEqual([]);
    const saved = await summaries.read();
    expect(saved?.at).toBe(clock.now());
    expect(saved?.census).toMatchObject({
      enabled: true,
      rows: 1,
      scaleSets: 1,
      stale: 1,
      ttlSeconds: 600,
      truncated: false,
      staleEntries: [{ scaleSetId: DEMO.scaleSetId.toLowerCase(), reason: "event: someone wrote it" }],
    });
  });

  it("logs a census it could not save, and lets the timer's run go on", async () => {
    const log = memoryLogger();
    await recordCensus(cache, new CensusSummaryTable(table(uniqueName("nosummary"))), { clock, log, ttlMs: 600_000 });
    expect(log.lines).toMatchObject([{ level: "warn", event: "timer.census-failed", error: expect.any(String) }]);
  });
});
