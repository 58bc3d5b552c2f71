import type { CensusSummaryTable } from "../azure/censusSummaryTable";
import type { Clock, Logger } from "../core/ports";
import { cacheCensus, savable, type CensusSource } from "../intake/cacheCensus";

/** The most rows the timer counts; past it the saved census says it is truncated, as a view's own scan would. */
export const TIMER_CENSUS_MAX_ROWS = 200_000;

/**
 * The timer counts the whole cache once per run and saves it, so that a status view over a large cache reads one
 * row instead of scanning (one scan per run, not one per view). A failure costs only fresher figures: logged, not
 * thrown, the run itself succeeded.
 */
export async function recordCensus(
  cache: CensusSource & { readonly enabled: boolean },
  store: Pick<CensusSummaryTable, "save">,
  o: { clock: Clock; log: Logger; ttlMs: number },
): Promise<void> {
  const at = o.clock.now();
  try {
    const census = await cacheCensus(cache, {
      enabled: cache.enabled,
      now: at,
      ttlMs: o.ttlMs,
      maxRows: TIMER_CENSUS_MAX_ROWS,
    });
    await store.save(at, savable(census));
  } catch (err) {
    o.log.warn("timer.census-failed", { error: (err as Error).message });
  }
}
