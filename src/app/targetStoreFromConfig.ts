import type { Config } from "../config";
import type { ControlBounds } from "../core/control";
import type { Clock, Logger } from "../core/ports";
import { CacheRowMac } from "../azure/cacheRowMac";
import { tableClient, type StoragePolicies } from "../azure/storageClients";
import { TargetStore } from "../azure/targets/targetStore";
import { jsonLogger } from "./logger";
import { systemClock } from "./systemClock";

/** The longest Retry-After poolsync honours: a stored requeue further ahead is not one it made. */
const MAX_REQUEUE_MS = 24 * 3_600_000;

/** The targets table as the settings describe it (also for tools that only read it: the demo, the soak). */
export function targetStoreFromConfig(
  config: Config,
  o: { clock?: Clock; log?: Logger; storagePolicies?: StoragePolicies } = {},
): TargetStore {
  const bounds: ControlBounds = {
    leaseMs: config.reconcileLeaseMs,
    maxRequeueMs: MAX_REQUEUE_MS,
    maxDueMs: Math.max(config.cacheTtlMs, config.failedRetryMs) * 4,
  };
  return new TargetStore(
    tableClient(config.storage, config.membershipsTable, o.storagePolicies ?? [], config.tableTimeoutMs),
    {
      now: (o.clock ?? systemClock).now,
      bounds,
      mac: new CacheRowMac(config.cacheKey),
      cacheEnabled: config.cacheEnabled,
      log: o.log ?? jsonLogger(),
    },
  );
}
