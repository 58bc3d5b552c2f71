import { historyEntryOf, type PassEvent, type PassEvents, type TargetHistory } from "../core/history";
import type { Logger } from "../core/ports";

/**
 * A pass's events as its target's history. Its writes (all of one target, one partition) go into the pass's commit,
 * written with the lease's release in one transaction: a process that dies mid-pass loses the history of that pass's
 * writes (never the writes: the next pass finds ARM as they left it). Its drifts and its failed or requeued end are
 * appended at once, blind inserts not awaited by the step that caused them: a history that cannot be written is
 * logged, and never fails the work.
 */
export function passHistory(
  targetId: string,
  deps: {
    /** Into the pass's commit. */
    record: (entry: ReturnType<typeof historyEntryOf>) => void;
    history: Pick<TargetHistory, "append">;
    now: () => number;
    log: Logger;
  },
): PassEvents {
  return {
    emit(event: PassEvent) {
      const entry = historyEntryOf(event, new Date(deps.now()).toISOString());
      if (event.kind === "write") return deps.record(entry);
      deps.history.append(targetId, entry).catch((err: unknown) =>
        deps.log.warn("history.append-failed", {
          targetId,
          event: event.kind === "drift" ? "drift" : "reconcile",
          error: (err as Error).message,
        }),
      );
    },
  };
}
