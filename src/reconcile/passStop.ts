import type { Config } from "../config";
import type { StoredDeclaration } from "../core/declarations";
import { BeingDeletedError, describeError, NotFoundError } from "../core/errors";
import { MissingEtagError } from "../core/etagGuard";
import type { Logger, ModelCache } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import type { OutcomeRecorder } from "./recordOutcomes";
import { comeBackOf, nextStep, reportFieldsOf, type ComeBack } from "./passResult";
import type { ReconcileReport, ReconcileResult, ReconcileTrigger } from "./vocabulary";

/**
 * What a pass that stopped early tells its declarations, the same for every target (scale set or VM): gone only on
 * ARM's own 404 or Deleting; a come-back (returned by its writes, or ARM's retriable answer) comes back later on the
 * queue (never slept out in the invocation) as `nextStep` decides, or gives up; anything else fails with ARM's
 * reason, for the timer to try again after its retry time.
 */

export interface StoppedPass {
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

/** Why a pass stopped early: ARM's (or storage's) error, or a come-back returned by its writes. */
export type PassStop = { error: unknown } | { comeBack: ComeBack };

export async function settleStop(
  stop: PassStop,
  f: StoppedPass,
  deps: {
    cache: Pick<ModelCache, "evictScaleSet">;
    log: Logger;
    config: Pick<Config, "maxAttempts" | "failedRetryMs">;
  },
): Promise<ReconcileReport> {
  const { active, declarations, outcomes, report, trigger } = f;
  const failing = f.spare ? active.filter((d) => !f.spare!(d)) : active;
  const err = "error" in stop ? stop.error : undefined;
  if (err instanceof NotFoundError) {
    await deps.cache.evictScaleSet(f.target);
    await outcomes.recordNotFound(active, err.message);
    return report("target-deleted", declarations, { reason: err.message });
  }
  if (err instanceof BeingDeletedError) {
    await outcomes.recordAll(active, { kind: "target-deleting", reason: err.message });
    return report("target-deleting", declarations, { reason: err.message });
  }
  const later = "comeBack" in stop ? stop.comeBack : comeBackOf(err, trigger.attempt);
  if (later) {
    const step = nextStep([later], trigger.attempt, deps.config.maxAttempts);
    if (step.kind === "give-up") {
      await outcomes.recordAll(failing, outcomes.failed(step.reason, deps.config.failedRetryMs));
      return report("failed", declarations, { reason: step.reason });
    }
    return report("requeued", declarations, reportFieldsOf(step));
  }
  const reason = err instanceof MissingEtagError ? err.message : describeError(err);
  deps.log.error("reconcile.error", { targetId: f.target.id, error: reason });
  // A terminal stop spares only what was applied before this pass: one whose model write went through but whose
  // instances this pass can never write must still end with the reason (invariant 3), not stay pending.
  const stopped = active.filter((d) => d.outcome.kind !== "applied");
  await outcomes.recordAll(stopped, outcomes.failed(reason, deps.config.failedRetryMs));
  return report("failed", declarations, { reason });
}
