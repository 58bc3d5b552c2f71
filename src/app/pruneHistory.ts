import type { TargetHistory } from "../core/history";
import type { Clock, Logger } from "../core/ports";

/** How often the timer prunes the histories: a prune reads every entry's key, so not on every run. */
export const HISTORY_PRUNE_EVERY_MS = 10 * 60_000;

let lastPrune = Number.NEGATIVE_INFINITY;

/** The timer's part: entries beyond the bound (200 per target, 30 days) go; a failure is logged, never the run's. */
export async function pruneHistory(history: TargetHistory, clock: Clock, log: Logger, force = false): Promise<number> {
  const now = clock.now();
  if (!force && now - lastPrune < HISTORY_PRUNE_EVERY_MS) return 0;
  lastPrune = now;
  try {
    const removed = await history.prune(now);
    if (removed > 0) log.info("history.pruned", { removed });
    return removed;
  } catch (err) {
    log.warn("history.prune-failed", { error: (err as Error).message });
    return 0;
  }
}
