import type { Config } from "../config";
import type { Clock, Logger } from "../core/ports";
import type { OldLayoutSweeper } from "../azure/oldLayoutSweep";
import type { ReadPacer } from "../azure/readPacing";
import type { CensusSummaryTable } from "../azure/censusSummaryTable";
import type { ProblemLogTable } from "../azure/problemLogTable";
import type { TargetCache } from "../azure/targets/targetCache";
import type { TargetHistoryTable } from "../azure/targets/targetHistory";
import type { StorageWorkQueue } from "../azure/workQueue";
import type { StaleRunSummary } from "../reconcile/reconcileStale";
import { inSpan } from "../telemetry/tracing";
import { timedStaleRun } from "./observe";
import { pruneHistory } from "./pruneHistory";
import { recordCensus } from "./recordCensus";
import { sweepOldLayout } from "./sweepOldLayout";

/**
 * The timer's run, in the order it runs: the refresh of stale cache rows (reconcileStale, reading in the background
 * share of CRP's read windows), then the upkeep that rides on it: history pruning, the old layout's sweep, the problem
 * log's trim, the census. Each upkeep step logs its own failure and never fails the run.
 */
export interface TimerRunDeps {
  refresh: () => Promise<StaleRunSummary>;
  readPacer: ReadPacer | undefined;
  history: TargetHistoryTable;
  oldLayout: OldLayoutSweeper;
  problems: Pick<ProblemLogTable, "trim">;
  cache: TargetCache;
  censusSummary: CensusSummaryTable;
  queue: StorageWorkQueue;
  clock: Clock;
  log: Logger;
  config: Pick<Config, "cacheTtlMs">;
}

export function timerRun(d: TimerRunDeps): Promise<StaleRunSummary> {
  const { clock, log } = d;
  return inSpan("poolsync.timer", {}, () =>
    timedStaleRun(
      async () => {
        // At most half of each of CRP's read windows, the rest stays for the passes (a refresh of thousands of scale
        // sets would otherwise spend a window on its own).
        const summary = await (d.readPacer ? d.readPacer.background(d.refresh) : d.refresh());
        await pruneHistory(d.history, clock, log);
        await sweepOldLayout(d.oldLayout, log);
        await d.problems
          .trim()
          .catch((err: unknown) => log.warn("timer.problems-trim-failed", { error: (err as Error).message }));
        await recordCensus(d.cache, d.censusSummary, { clock, log, ttlMs: d.config.cacheTtlMs });
        return summary;
      },
      d.queue,
      clock,
    ),
  );
}
