import { TableClient } from "@azure/data-tables";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { CacheRowMac } from "../../src/azure/cacheRowMac";
import { ResourceOwnerTable } from "../../src/azure/resourceOwnerTable";
import { TargetCache } from "../../src/azure/targets/targetCache";
import { TargetDeclarations } from "../../src/azure/targets/targetDeclarations";
import { TargetStore } from "../../src/azure/targets/targetStore";
import { QUEUE_DECLARER, type Declaration, type StoredDeclaration } from "../../src/core/declarations";
import type { TargetRef } from "../../src/core/resourceIds";
import { manualClock } from "./harness";

/**
 * A targets table of its own on the shared Azurite (and a shared table for the cache's owner rows), with the store, its
 * declarations and its cache on a clock the test moves: for unit tests of modules that record outcomes, read
 * declarations or keep cache rows across the real Table edge.
 */
export async function targetTableOnAzurite(prefix: string) {
  const tableOf = (name: string) =>
    TableClient.fromConnectionString(testStorageConnectionString(), name, { allowInsecureConnection: true });
  const [table, shared] = [tableOf(uniqueName(prefix)), tableOf(uniqueName(`${prefix}s`))];
  await Promise.all([table.createTable(), shared.createTable()]);
  const clock = manualClock();
  const log = memoryLogger();
  const store = new TargetStore(table, {
    now: clock.now,
    bounds: { leaseMs: 60_000, maxRequeueMs: 86_400_000, maxDueMs: 3_600_000 },
    mac: new CacheRowMac(`${prefix}-test-key-0123456789abcdef`),
    cacheEnabled: true,
    log,
  });
  const declarations = new TargetDeclarations(store);
  const owners = new ResourceOwnerTable(shared);
  const cache = new TargetCache(store, owners);
  /** Stores declarations of `target` as the intake would, and answers them as a pass lists them. */
  const declare = async (target: TargetRef, ds: Array<Partial<Declaration> & Pick<Declaration, "backendPoolId">>) => {
    for (const [i, d] of ds.entries())
      await declarations.upsert(target, {
        scaleSetId: target.id,
        ipConfiguration: "",
        state: "present",
        declaredAt: new Date(clock.now()).toISOString(),
        requestId: `${prefix}-${i}-${d.backendPoolId}`,
        declaredBy: QUEUE_DECLARER,
        ...d,
      });
    return declarations.listForTarget(target);
  };
  const byPool = (ds: readonly StoredDeclaration[], pool: string) => ds.find((d) => d.backendPoolId === pool)!;
  return { table, shared, store, clock, log, declarations, owners, cache, declare, byPool };
}
