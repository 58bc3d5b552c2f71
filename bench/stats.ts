// Small statistics for the benchmark: medians with their spread over runs, percentiles within a run.

export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: p99 of 50 values is the 50th, never an interpolation that no run showed.
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function spread(runs: readonly number[]): Spread {
  const finite = runs.filter((r) => Number.isFinite(r));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: [...runs] };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), runs: [...runs] };
}

/**
 * The median over runs: for an even count the mean of the middle two. Nearest rank (as percentile) would take the
 * lower of two runs, the faster one for a time, and a target judged on it would be met by the luckier run alone.
 */
function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid)
    ? ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
    : (sorted[Math.floor(mid)] as number);
}

/** Median and spread of each numeric field over the runs' records. */
export function summarise<K extends string>(records: ReadonlyArray<Record<K, number>>): Record<K, Spread> {
  const out = {} as Record<K, Spread>;
  const first = records[0];
  if (!first) return out;
  for (const k of Object.keys(first) as K[]) out[k] = spread(records.map((r) => r[k]));
  return out;
}

export function ratio(a: number, b: number): number {
  return b === 0 ? (a === 0 ? 1 : Number.POSITIVE_INFINITY) : a / b;
}

/** A deterministic PRNG (the simulator's), so every strategy sees the same workload in a run. */
export { seededRandom as prng } from "../sim/random";
