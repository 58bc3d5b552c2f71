import { TableClient } from "@azure/data-tables";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { CacheRowMac } from "../../src/azure/cacheRowMac";
import { TargetStore } from "../../src/azure/targets/targetStore";
import type { Logger } from "../../src/core/ports";

/** A Table client on the suite's Azurite for a table of the test's own, created empty. */
export async function freshTable(prefix: string): Promise<TableClient> {
  const table = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName(prefix), {
    allowInsecureConnection: true,
  });
  await table.createTable();
  return table;
}

/** A targets table of the test's own on Azurite, read on `now` (1 min leases, bounds as the app sets them). */
export async function freshTargetStore(now: () => number, log: Logger = memoryLogger()): Promise<TargetStore> {
  return targetStoreOn(await freshTable("targets"), now, log);
}

/** Another host's store over the same table (its own client state, the same rows). */
export function targetStoreOn(table: TableClient, now: () => number, log: Logger = memoryLogger()): TargetStore {
  return new TargetStore(table, {
    now,
    bounds: { leaseMs: 60_000, maxRequeueMs: 86_400_000, maxDueMs: 3_600_000 },
    mac: new CacheRowMac("unit-test-key-0123456789abcdef"),
    cacheEnabled: true,
    log,
  });
}
