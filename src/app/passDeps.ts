import type { Config } from "../config";
import { doubtRemainingMs, type WriteInDoubt } from "../core/control";
import type { Clock, Logger } from "../core/ports";
import type { OpenPass } from "../core/targetPasses";
import type { TargetHistory } from "../core/history";
import { passHistory } from "../reconcile/passHistory";
import type { LeaseGuard } from "../reconcile/leaseGuard";
import type { PoolDeps } from "../reconcile/reconcileTarget";
import type { ReconcileDeps } from "../reconcile/vocabulary";

/**
 * What one pass works on: the process's ARM edges and pacing, and its target's open partition (declarations, cache
 * rows, writers, drifts, doubts, history), each written with the pass's commit; its lease checked before each write.
 */
export type ProcessDeps = Omit<ReconcileDeps, "declarations" | "cache" | "drift" | "lease" | "doubts" | "events">;

export function passDeps(
  process: ProcessDeps & { log: Logger; clock: Clock; config: Pick<Config, "writeDoubtMs"> },
  history: Pick<TargetHistory, "append">,
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
    events: passHistory(targetId, {
      record: (entry) => open.recordHistory(entry),
      history,
      now: clock.now,
      log: process.log,
    }),
    lease,
    doubts: {
      record: (d: WriteInDoubt) => open.recordDoubt(d),
      remainingMs: (id: string, etag: string) =>
        doubtRemainingMs(open.control.doubts, id, etag, clock.now(), config.writeDoubtMs),
    },
    pools,
  };
}
