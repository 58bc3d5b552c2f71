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

/** One cache row of a scale set's partition, its small columns only (the model stays on the server). */
export interface CensusRow {
  scaleSetId: string;
  /** Absent for the scale set's own row. */
  instanceId?: string;
  stale: boolean;
  staleReason?: string;
  staleAt?: number;
  readAt?: number;
}

/** The cache as the census reads it (src/azure's EtagCacheTable); no table yet = no rows. */
export interface CensusSource {
  censusRows(): AsyncIterable<CensusRow>;
}

export interface CensusOptions {
  enabled: boolean;
  now: number;
  ttlMs: number;
  maxRows?: number;
  maxListed?: number;
}

export async function cacheCensus(source: CensusSource, o: CensusOptions): Promise<CacheCensus> {
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
  for await (const row of source.censusRows()) {
    if (census.rows >= maxRows) {
      census.truncated = true;
      break;
    }
    census.rows++;
    const { scaleSetId, instanceId } = row;
    if (instanceId === undefined) census.scaleSets++;
    else census.instances++;
    const readAt = row.readAt ?? 0;
    if (row.stale) {
      census.stale++;
      const at = row.staleAt ?? 0;
      listed.push({
        scaleSetId,
        ...(instanceId ? { instanceId } : {}),
        reason: row.staleReason || "marked stale",
        since: new Date(at).toISOString(),
        at,
      });
    } else if (readAt > 0 && o.now - readAt >= o.ttlMs) {
      census.expired++;
      listed.push({
        scaleSetId,
        ...(instanceId ? { instanceId } : {}),
        reason: "past the TTL",
        since: new Date(readAt).toISOString(),
        at: readAt,
      });
    }
  }
  census.staleEntries = listed
    .sort((a, b) => a.at - b.at)
    .slice(0, o.maxListed ?? 50)
    .map(({ at: _at, ...e }) => e);
  return census;
}
