import type { TableClient } from "@azure/data-tables";
import { decodeKey } from "../core/tableKeys";

/**
 * Counts of the ETag cache from one scan of its small columns (the models stay on the server), and the rows
 * that are stale or past the TTL: the entries the timer will re-read next.
 */

export interface StaleEntry {
  scaleSetId: string;
  instanceId?: string;
  reason: string;
  since: string;
}

export interface CacheCensus {
  enabled: boolean;
  rows: number;
  scaleSets: number;
  instances: number;
  stale: number;
  /** Not marked stale but read longer ago than the TTL. */
  expired: number;
  ttlSeconds: number;
  /** The oldest first, at most `maxListed`. */
  staleEntries: StaleEntry[];
  /** The scan stopped at its row limit; counts are lower bounds. */
  truncated: boolean;
}

interface CensusRow {
  partitionKey: string;
  rowKey: string;
  resourceId?: string;
  stale?: boolean;
  staleReason?: string;
  staleAt?: number;
  readAt?: number;
}

export interface CensusOptions {
  enabled: boolean;
  now: number;
  ttlMs: number;
  maxRows?: number;
  maxListed?: number;
}

/** Keys of scale set partitions start with the encoded "/" (see tableKeys); anything else is bookkeeping. */
const isScaleSetPartition = (pk: string) => pk.startsWith("%2F");

export async function cacheCensus(table: TableClient, o: CensusOptions): Promise<CacheCensus> {
  const census: CacheCensus = {
    enabled: o.enabled,
    rows: 0,
    scaleSets: 0,
    instances: 0,
    stale: 0,
    expired: 0,
    ttlSeconds: Math.round(o.ttlMs / 1000),
    staleEntries: [],
    truncated: false,
  };
  if (!o.enabled) return census;
  const maxRows = o.maxRows ?? 20_000;
  const listed: (StaleEntry & { at: number })[] = [];
  const rows = table.listEntities<CensusRow>({
    queryOptions: { select: ["PartitionKey", "RowKey", "resourceId", "stale", "staleReason", "staleAt", "readAt"] },
  });
  try {
    for await (const row of rows) {
      if (!isScaleSetPartition(row.partitionKey)) continue;
      if (census.rows >= maxRows) {
        census.truncated = true;
        break;
      }
      census.rows++;
      const instanceId = row.rowKey.startsWith("vm-") ? row.rowKey.slice(3) : undefined;
      if (instanceId === undefined) census.scaleSets++;
      else census.instances++;
      const readAt = Number(row.readAt ?? 0);
      const scaleSetId = decodeKey(row.partitionKey);
      if (row.stale === true) {
        census.stale++;
        const at = Number(row.staleAt ?? 0);
        listed.push({ scaleSetId, ...(instanceId ? { instanceId } : {}), reason: row.staleReason || "marked stale", since: new Date(at).toISOString(), at });
      } else if (readAt > 0 && o.now - readAt >= o.ttlMs) {
        census.expired++;
        listed.push({ scaleSetId, ...(instanceId ? { instanceId } : {}), reason: "past the TTL", since: new Date(readAt).toISOString(), at: readAt });
      }
    }
  } catch (err) {
    // No table yet (nothing was ever cached): zero rows, not an error.
    if ((err as { statusCode?: number }).statusCode !== 404) throw err;
  }
  census.staleEntries = listed
    .sort((a, b) => a.at - b.at)
    .slice(0, o.maxListed ?? 50)
    .map(({ at: _at, ...e }) => e);
  return census;
}
