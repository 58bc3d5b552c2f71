import type { Config } from "../config";
import type { StoredDeclaration } from "../core/declarations";
import {
  BeingDeletedError,
  ConflictError,
  describeError,
  NotFoundError,
  ThrottledError,
  TransientError,
} from "../core/errors";
import { MissingEtagError } from "../core/etagGuard";
import type { Logger, ModelCache } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { requeueBackoffMs } from "../core/retryPolicy";
import type { OutcomeRecorder } from "./recordOutcomes";
import { Requeue } from "./requeue";
import type { ReconcileReport, ReconcileResult, ReconcileTrigger } from "./vocabulary";

/**
 * What a reconcile that threw tells its declarations, the same for every target (scale set or VM): gone only on
 * ARM's own 404 or Deleting; a retriable answer comes back later on the queue (never slept out in the invocation)
 * until POOLSYNC_MAX_ATTEMPTS; anything else fails with ARM's reason, for the timer to try again after its retry time.
 */

export interface FailedReconcile {
  target: TargetRef;
  trigger: ReconcileTrigger;
  /** The declarations this pass was writing. */
  active: StoredDeclaration[];
  declarations: number;
  outcomes: OutcomeRecorder;
  report(result: ReconcileResult, declarations: number, extra?: Partial<ReconcileReport>): ReconcileReport;
  /**
   * Declarations this stop must not mark failed: those already applied (a stop of a later pass does not undo them)
   * and those this pass settled itself (written, or failed alone and recorded then).
   */
  spare?: (d: StoredDeclaration) => boolean;
}

export async function settleFailure(
  err: unknown,
  f: FailedReconcile,
  deps: {
    cache: Pick<ModelCache, "evictScaleSet">;
    log: Logger;
    config: Pick<Config, "maxAttempts" | "failedRetryMs">;
  },
): Promise<ReconcileReport> {
  const { active, declarations, outcomes, report, trigger } = f;
  const failing = f.spare ? active.filter((d) => !f.spare!(d)) : active;
  if (err instanceof NotFoundError) {
    await deps.cache.evictScaleSet(f.target);
    await outcomes.recordNotFound(active, err.message);
    return report("target-deleted", declarations, { reason: err.message });
  }
  if (err instanceof BeingDeletedError) {
    await outcomes.recordAll(active, { kind: "target-deleting", reason: err.message });
    return report("target-deleting", declarations, { reason: err.message });
  }
  const retry = retryOf(err, trigger);
  if (retry) {
    // A wait the budgets or ARM asked for (our pacing, a 429, a 409 while another operation runs) is no failure: it
    // comes back after it as often as it takes. Only failures count towards giving up.
    if (trigger.attempt + 1 > deps.config.maxAttempts && !isWait(err)) {
      const reason = `gave up after ${trigger.attempt} re-enqueued attempts: ${retry.why}`;
      await outcomes.recordAll(failing, outcomes.failed(reason, deps.config.failedRetryMs));
      return report("failed", declarations, { reason });
    }
    return report("requeued", declarations, { requeueAfterMs: retry.delayMs, reason: retry.why });
  }
  const reason = err instanceof MissingEtagError ? err.message : describeError(err);
  deps.log.error("reconcile.error", { targetId: f.target.id, error: reason });
  // A terminal stop spares only what was applied before this pass: one whose model write went through but whose
  // instances this pass can never write must still end with the reason (invariant 3), not stay pending.
  const stopped = active.filter((d) => d.outcome.kind !== "applied");
  await outcomes.recordAll(stopped, outcomes.failed(reason, deps.config.failedRetryMs));
  return report("failed", declarations, { reason });
}

/**
 * A pass sent back to wait, not because something failed: for our own pacing (a window of CRP's may keep a burst's
 * passes waiting for minutes, several times over), or for Network RP's "busy" answers (409
 * AnotherOperationInProgress while another write to the resource runs, 429 RetryableError).
 */
function isWait(err: unknown): boolean {
  if (err instanceof ThrottledError || err instanceof ConflictError)
    return err.code === "RetryableError" || err.code === "AnotherOperationInProgress";
  return err instanceof Requeue && /^pacing:/.test(err.why);
}

/** A retriable answer as the requeue it asks for, or undefined when retrying would only fail again. */
export function retryOf(err: unknown, trigger: ReconcileTrigger): Requeue | undefined {
  if (err instanceof Requeue) return err;
  if (err instanceof ThrottledError) return new Requeue(err.retryAfterMs, `throttled: ${err.message}`);
  if (err instanceof ConflictError) return new Requeue(err.retryAfterMs, `conflict: ${err.message}`);
  if (err instanceof TransientError)
    return new Requeue(Math.max(err.retryAfterMs, requeueBackoffMs(trigger.attempt + 1)), `transient: ${err.message}`);
  return undefined;
}
