import type { Config } from "../config";
import { doubtRemainingMs, type WriteInDoubt } from "../core/control";
import type { Clock, Logger } from "../core/ports";
import type { OpenPass } from "../core/targetPasses";
import { passHistoryLog } from "../reconcile/historyLog";
import type { LeaseGuard } from "../reconcile/leaseGuard";
import type { PoolDeps } from "../reconcile/reconcileTarget";
import type { ReconcileDeps } from "../reconcile/vocabulary";

/**
 * What one pass works on: the process's ARM edges and pacing, and its target's open partition (declarations, cache
 * rows, writers, drifts, doubts, history), each written with the pass's commit; its lease checked before each write.
 */
export type ProcessDeps = Omit<ReconcileDeps, "declarations" | "cache" | "drift" | "lease" | "doubts">;

export function passDeps(
  process: ProcessDeps & { log: Logger; clock: Clock; config: Pick<Config, "writeDoubtMs"> },
  pools: PoolDeps,
  targetId: string,
  lease: LeaseGuard,
  open: OpenPass,
): ReconcileDeps & { pools: PoolDeps } {
  const { clock, config } = process;
  return {
    ...process,
    declarations: open.declarations,
    cache: open.cache,
    // Writers are recorded by the events that saw them; a pass only reads them.
    drift: {
      writers: { read: (id: string) => open.writers.read(id), record: () => Promise.resolve() },
      drifts: open.drifts,
    },
    // The pass's history goes into its commit; lines about other targets (none) would go at once.
    log: passHistoryLog(process.log, (entry) => open.recordHistory(entry), clock.now, targetId),
    lease,
    doubts: {
      record: (d: WriteInDoubt) => open.recordDoubt(d),
      remainingMs: (id: string, etag: string) =>
        doubtRemainingMs(open.control.doubts, id, etag, clock.now(), config.writeDoubtMs),
    },
    pools,
  };
}
