import { ConflictError, heldByOwnPacing, ThrottledError, TransientError } from "../core/errors";
import { requeueBackoffMs } from "../core/retryPolicy";

/**
 * What a pass says about what happens next, and the one function that turns it into what the queue does
 * (controller-runtime's `reconcileHandler` switch). A pass that cannot go on returns a `ComeBack` (it is never thrown):
 * the If-Match loop when the write budget is spent or 412s keep coming, the failure isolation when its writes are
 * spent, the lease when it lapsed; ARM's retriable answers become one at the pass's edge (`comeBackOf`). A pass that
 * ends well may still ask to come back (a write of ours in doubt, CRP rolling the model out). `nextStep` alone decides
 * between coming back and giving up.
 */

/** Why a pass comes back; it decides whether the attempt counts towards POOLSYNC_MAX_ATTEMPTS. */
export type ComeBackCause =
  /**
   * Sent back to wait, not because something failed: our own pacing (a window of CRP's may keep a burst's passes
   * waiting for minutes, several times over), Network RP's "busy" answers (409 AnotherOperationInProgress while another
   * write to the resource runs, 429 RetryableError), a write of ours in doubt. As often as it takes.
   */
  | "wait"
  /** Something failed that may not fail again (a throttle, 412s in a row, a timeout, the lease lost): counted. */
  | "retry"
  /** A look at CRP's rollout of the model: while the attempts last, then the pass just ends. */
  | "recheck";

export interface ComeBack {
  afterMs: number;
  reason: string;
  cause: ComeBackCause;
}

export const comeBack = (cause: ComeBackCause, afterMs: number, reason: string): ComeBack => ({
  cause,
  afterMs,
  reason,
});

/** What the queue does after a pass. */
export type NextStep =
  | { kind: "done" }
  /** `counted`: some reason is not a wait, so the next attempt is numbered one more (waits keep the number). */
  | { kind: "requeue-after"; delayMs: number; reason: string; counted: boolean }
  | { kind: "give-up"; reason: string };

/**
 * The one mapping from what a pass asks (its reasons to come back; none: it is done) to the queue, given the attempt
 * it was (0 for a fresh request). Past POOLSYNC_MAX_ATTEMPTS a failure gives up and a rollout check ends; a wait comes
 * back whatever the count, and does not add to it: a chain that waited out minutes of pacing still has every attempt
 * for a failure that follows. Several reasons come back together, at the latest one's time, with the first's reason.
 */
export function nextStep(asked: ReadonlyArray<ComeBack | undefined>, attempt: number, maxAttempts: number): NextStep {
  const exhausted = attempt + 1 > maxAttempts;
  let requeue: { delayMs: number; reason: string; counted: boolean } | undefined;
  for (const c of asked) {
    if (!c) continue;
    if (exhausted && c.cause === "retry")
      return { kind: "give-up", reason: `gave up after ${attempt} re-enqueued attempts: ${c.reason}` };
    if (exhausted && c.cause === "recheck") continue;
    const counted = c.cause !== "wait";
    requeue = requeue
      ? { delayMs: Math.max(requeue.delayMs, c.afterMs), reason: requeue.reason, counted: requeue.counted || counted }
      : { delayMs: c.afterMs, reason: c.reason, counted };
  }
  return requeue ? { kind: "requeue-after", ...requeue } : { kind: "done" };
}

/** ARM's retriable answer as the come-back it asks for, or undefined when retrying would only fail again. */
export function comeBackOf(err: unknown, attempt: number): ComeBack | undefined {
  const busy = (e: ThrottledError | ConflictError) =>
    e.code === "RetryableError" || e.code === "AnotherOperationInProgress" ? "wait" : "retry";
  // Held by our own pacing, never sent: said as the write pacer's holds are ("pacing: …"), not as ARM's throttle.
  if (heldByOwnPacing(err)) return comeBack("wait", err.retryAfterMs, `pacing: ${err.message}`);
  if (err instanceof ThrottledError) return comeBack(busy(err), err.retryAfterMs, `throttled: ${err.message}`);
  if (err instanceof ConflictError) return comeBack(busy(err), err.retryAfterMs, `conflict: ${err.message}`);
  if (err instanceof TransientError)
    return comeBack("retry", Math.max(err.retryAfterMs, requeueBackoffMs(attempt + 1)), `transient: ${err.message}`);
  return undefined;
}

/** A requeue step as the report's fields (the `reconcile` log line and the queue read them). */
export function reportFieldsOf(step: NextStep): { requeueAfterMs?: number; reason?: string; requeueWaits?: true } {
  if (step.kind !== "requeue-after") return {};
  return {
    requeueAfterMs: step.delayMs,
    reason: step.reason,
    ...(step.counted ? {} : { requeueWaits: true as const }),
  };
}
