import { TableClient } from "@azure/data-tables";
import { beforeAll, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { targetStoreFromConfig } from "../../src/app/targetStoreFromConfig";
import { memoryLogger } from "../../src/app/logger";
import { ResourceOwnerTable } from "../../src/azure/resourceOwnerTable";
import { instanceRowKey, MODEL_ROW, targetPartition } from "../../src/azure/targets/rowKeys";
import { TargetCache } from "../../src/azure/targets/targetCache";
import { loadConfig } from "../../src/config";
import { cacheCensus, savable, savedCensusOf, type CacheCensus } from "../../src/intake/cacheCensus";
import { scaleSetRef } from "../support/refs";
import { NOW, TTL_MS, VMSS } from "./viewFixtures";

/**
 * src/intake/cacheCensus.ts: the ETag cache counted from its small columns (the app's own TargetCache reading
 * Azurite), the rows the timer re-reads next listed oldest first; and the timer's saved census read back as input.
 */
const OTHER = VMSS.replace(/\/web$/, "/api");
const census = (cache: TargetCache, o: { enabled?: boolean; maxRows?: number; maxListed?: number } = {}) =>
  cacheCensus(cache, { enabled: true, now: NOW, ttlMs: TTL_MS, ...o });

describe("cacheCensus over the app's cache (Azurite)", () => {
  let cache: TargetCache;
  beforeAll(async () => {
    const config = loadConfig({
      AzureWebJobsStorage: testStorageConnectionString(),
      POOLSYNC_SCOPES: "/subscriptions/00000000-1111-2222-3333-444444444444",
      POOLSYNC_BINDINGS: "*",
      POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("cc"),
      POOLSYNC_CACHE_ENABLED: "true",
    });
    const store = targetStoreFromConfig(config, { log: memoryLogger() });
    await store.table.createTable();
    const row = (id: string, rowKey: string, readAt: number, stale?: { reason: string; at: number }) => ({
      partitionKey: targetPartition(scaleSetRef(id)),
      rowKey,
      readAt,
      stale: stale !== undefined,
      ...(stale ? { staleReason: stale.reason, staleAt: stale.at } : {}),
    });
    const fresh = NOW - 1_000;
    await store.table.submitTransaction(
      [
        row(VMSS, MODEL_ROW, fresh),
        row(VMSS, instanceRowKey("0"), fresh, { reason: "412 on instance 0", at: NOW - 5_000 }),
        row(VMSS, instanceRowKey("1"), NOW - TTL_MS - 1),
      ].map((r) => ["create", r]),
    );
    await store.table.submitTransaction(
      [row(OTHER, MODEL_ROW, fresh, { reason: "event e7 ResourceWriteSuccess", at: NOW - 9_000 })].map((r) => [
        "create",
        r,
      ]),
    );
    const shared = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("cs"), {
      allowInsecureConnection: true,
    });
    cache = new TargetCache(store, new ResourceOwnerTable(shared));
  });

  it("counts scale sets and instances, the stale ones and those past the TTL", async () => {
    expect(await census(cache)).toMatchObject({
      enabled: true,
      rows: 4,
      scaleSets: 2,
      instances: 2,
      stale: 2,
      expired: 1,
      ttlSeconds: 300,
      truncated: false,
    });
  });

  it("lists what the timer re-reads next, oldest first, with why and since when", async () => {
    const { staleEntries } = await census(cache, { maxListed: 2 });
    expect(staleEntries).toEqual([
      {
        scaleSetId: scaleSetRef(VMSS).key,
        instanceId: "1",
        reason: "past the TTL",
        since: new Date(NOW - TTL_MS - 1).toISOString(),
      },
      {
        scaleSetId: scaleSetRef(OTHER).key,
        reason: "event e7 ResourceWriteSuccess",
        since: new Date(NOW - 9_000).toISOString(),
      },
    ]);
  });

  it("stops at its row limit and says the counts are lower bounds", async () => {
    expect(await census(cache, { maxRows: 3 })).toMatchObject({ rows: 3, truncated: true });
  });

  it("reads nothing when the cache is disabled", async () => {
    expect(await census(cache, { enabled: false })).toMatchObject({ enabled: false, rows: 0, staleEntries: [] });
  });
});

describe("the timer's saved census", () => {
  const counted: CacheCensus = {
    enabled: true,
    rows: 10,
    scaleSets: 2,
    instances: 8,
    stale: 1,
    expired: 0,
    ttlSeconds: 300,
    staleEntries: [{ scaleSetId: VMSS, reason: "x".repeat(1_000), since: "2026-12-02T09:00:00.000Z" }],
    truncated: false,
  };

  it("is saved with each listed reason cut short, to fit one Table property", () => {
    expect(savable(counted).staleEntries[0]?.reason).toHaveLength(300);
    expect(savable(counted).rows).toBe(10);
  });

  it("reads back as a census, dropping listed entries that are not entries", () => {
    const back = savedCensusOf({
      at: NOW,
      census: { ...counted, staleEntries: [...counted.staleEntries, { scaleSetId: 7 }, "junk"] },
    });
    expect(back?.at).toBe(NOW);
    expect(back?.census).toMatchObject({ rows: 10, instances: 8 });
    expect(back?.census.staleEntries).toHaveLength(1);
    expect(back?.census.staleEntries[0]?.reason).toHaveLength(300);
  });

  it("reads as none when what was stored is not a census", () => {
    expect(savedCensusOf(undefined)).toBeUndefined();
    expect(savedCensusOf({ at: Number.NaN, census: counted })).toBeUndefined();
    expect(savedCensusOf({ at: NOW, census: { ...counted, rows: "10" } })).toBeUndefined();
    expect(savedCensusOf({ at: NOW, census: null })).toBeUndefined();
  });
});
