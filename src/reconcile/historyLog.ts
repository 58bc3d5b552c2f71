import { poolsMoved, type HistoryEntry, type TargetHistory } from "../core/history";
import type { Logger } from "../core/ports";

/**
 * The history is written from what poolsync already logs, so no reconcile step grows a second way to say what it
 * did: a logger that passes every line on and, for the lines that are history (a write, a drift, a failed or requeued
 * pass), appends an entry to the target's timeline (a declaration's entry is stored with the declaration itself). Appends are blind inserts, not awaited by the line
 * that caused them: a history that cannot be written is logged, and never fails the work.
 */

const str = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));

/**
 * The history entry a log line makes, and the target it belongs to. A write's line does not name the target it was
 * made for (a Flexible VM's NIC serves its scale set): only a reconcile pass's own logger (`targetId`) records writes,
 * and only the process-wide one records the rest, so no line is recorded twice.
 */
export function historyOf(
  event: string,
  f: Record<string, unknown>,
  at: string,
  targetId?: string,
): [string, HistoryEntry] | undefined {
  if (targetId !== undefined && event !== "arm.write") return undefined;
  if (event === "arm.write" && targetId) {
    const what = str(f.target);
    const resourceId =
      what === "model"
        ? str(f.scaleSetId)
        : what.startsWith("instance ")
          ? `${str(f.scaleSetId)}/virtualMachines/${what.slice(9)}`
          : str(f.nicId);
    const { added, removed } = poolsMoved(Array.isArray(f.pools) ? f.pools.map(str) : []);
    return [
      targetId,
      {
        at,
        kind: "write",
        resourceId,
        resourceKind: what.startsWith("instance ") ? "instance" : what,
        etagBefore: str(f.ifMatch),
        etagAfter: str(f.etag),
        added,
        removed,
        outcome: str(f.outcome),
        clientRequestId: str(f.clientRequestId),
      },
    ];
  }
  if (event === "drift") {
    const by = (f.by ?? {}) as { name: string; id: string; appId: string };
    return [
      str(f.targetId),
      {
        at: str(f.at) || at,
        kind: "drift",
        backendPoolId: str(f.backendPoolId),
        ipConfiguration: str(f.ipConfiguration),
        resourceId: str(f.resourceId),
        by,
        operation: str(f.operation),
        correlationId: str(f.correlationId),
        source: str(f.source),
        repairedAt: f.repairedAt ? str(f.repairedAt) : null,
      },
    ];
  }
  if (event === "reconcile" && (f.result === "failed" || f.result === "requeued")) {
    return [str(f.targetId), { at, kind: "failure", result: str(f.result), reason: str(f.reason) }];
  }
  return undefined;
}

export function historyLog(log: Logger, history: TargetHistory, now: () => number, targetId?: string): Logger {
  const tee = (event: string, fields: Record<string, unknown>) => {
    const made = historyOf(event, fields, new Date(now()).toISOString(), targetId);
    if (!made || !made[0]) return;
    history
      .append(made[0], made[1])
      .catch((err: unknown) =>
        log.warn("history.append-failed", { targetId: made[0], event, error: (err as Error).message }),
      );
  };
  return {
    info: (event, fields) => (log.info(event, fields), tee(event, fields)),
    warn: (event, fields) => (log.warn(event, fields), tee(event, fields)),
    error: (event, fields) => (log.error(event, fields), tee(event, fields)),
  };
}

/**
 * A pass's own logger: its write entries (all of one target, one partition) go into the pass's commit, written with
 * the lease's release in one transaction. A process that dies mid-pass loses the history of that pass's writes
 * (never the writes: the next pass finds ARM as they left it).
 */
export function passHistoryLog(
  log: Logger,
  record: (entry: HistoryEntry) => void,
  now: () => number,
  targetId: string,
): Logger {
  const keep = (event: string, fields: Record<string, unknown>) => {
    const made = historyOf(event, fields, new Date(now()).toISOString(), targetId);
    if (made?.[0]) record(made[1]);
  };
  return {
    info: (event, fields) => (log.info(event, fields), keep(event, fields)),
    warn: (event, fields) => (log.warn(event, fields), keep(event, fields)),
    error: (event, fields) => (log.error(event, fields), keep(event, fields)),
  };
}
