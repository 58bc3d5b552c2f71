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
  /**
   * Set when the figures are the timer's full count at this time, not this view's own scan: the cache had more rows
   * than a view reads (a view's cost stays bounded however large the cache grows).
   */
  asOf?: string;
}

/** A full census the timer saved, for views over a cache too large to count on every GET. */
export interface SavedCensus {
  at: number;
  census: CacheCensus;
}

/** Where the timer's census is kept: what it read back is unchecked until savedCensusOf. */
export interface CensusSummaries {
  read(): Promise<{ at: number; census: unknown } | undefined>;
}

/** Keeps the saved row under Table's 64 KiB property limit: 50 listed entries of at most this much reason. */
const MAX_SAVED_REASON = 300;

/** A census as the timer saves it: the listed entries' reasons cut short. */
export const savable = (c: CacheCensus): CacheCensus => ({
  ...c,
  staleEntries: c.staleEntries.map((e) => ({ ...e, reason: e.reason.slice(0, MAX_SAVED_REASON) })),
});

/** Storage content is input: a saved row that is not a census reads as none (the view keeps its own partial scan). */
export function savedCensusOf(saved: { at: number; census: unknown } | undefined): SavedCensus | undefined {
  if (!saved || !Number.isFinite(saved.at)) return undefined;
  const c = saved.census as Partial<CacheCensus> | null;
  const counts = ["rows", "scaleSets", "instances", "stale", "expired", "ttlSeconds"] as const;
  if (typeof c !== "object" || c === null || !counts.every((k) => Number.isSafeInteger(c[k]))) return undefined;
  const entries: unknown[] = Array.isArray(c.staleEntries) ? c.staleEntries : [];
  const isEntry = (e: unknown): e is StaleEntry =>
    typeof e === "object" &&
    e !== null &&
    typeof (e as StaleEntry).scaleSetId === "string" &&
    typeof (e as StaleEntry).reason === "string" &&
    typeof (e as StaleEntry).since === "string";
  return {
    at: saved.at,
    census: {
      enabled: c.enabled === true,
      rows: c.rows!,
      scaleSets: c.scaleSets!,
      instances: c.instances!,
      stale: c.stale!,
      expired: c.expired!,
      ttlSeconds: c.ttlSeconds!,
      truncated: c.truncated === true,
      staleEntries: entries
        .filter(isEntry)
        .slice(0, 50)
        .map((e) => ({
          scaleSetId: e.scaleSetId,
          ...(typeof e.instanceId === "string" ? { instanceId: e.instanceId } : {}),
          reason: e.reason.slice(0, MAX_SAVED_REASON),
          since: e.since,
        })),
    },
  };
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
  /** `maxRows`: the census reads at most this many rows and one more; the source need not fetch beyond them. */
  censusRows(maxRows?: number): AsyncIterable<CensusRow>;
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
  for await (const row of source.censusRows(maxRows)) {
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
