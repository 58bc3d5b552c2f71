import type { ControlState } from "../core/control";
import type { Clock, Logger, ProblemLog, WorkQueue } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import type { OpenPass, TargetPasses } from "../core/targetPasses";
import { expireDoubts, windowPending } from "../core/control";
import { Coalescer } from "./coalescer";
import { leasedReconcile, type LeaseHandover, type Settled } from "./leasedReconcile";
import type { LeaseGuard } from "./leaseGuard";
import {
  deferredReport,
  JUST_CLAIMED_MS,
  mergeTriggers,
  type ReconcileReport,
  type ReconcileTrigger,
} from "./vocabulary";
import { recordDriftRepaired, recordReconcile } from "../telemetry/metrics";
import { inSpan } from "../telemetry/tracing";

/**
 * How a reconcile runs, in the order it runs (controller-runtime's `reconcileHandler`):
 *
 *   1. coalescer   joined with every other reconcile of the same target in this process (a fresh one gathers briefly,
 *                  a leading one starts at once);
 *   2. stand down  a leading pass that finds a declare window opened behind it leaves the work to that window's pass;
 *                  a gathered one whose host is taking in a backlog of declarations goes back to the queue for a
 *                  second, so that it reads after them (see `INTAKE_DEFER_MS`);
 *   3. lease       one reconcile of a target at a time across hosts (held elsewhere: "deferred", the holder runs
 * again);
 *   4. reconcile   any pass but a leading one closes its target's declare window (so a later declaration opens a new
 *                  one), then the target's own reconcile (scale set or VM): re-read, write the difference with If-Match;
 *   5. outcome     the pass's report carries what `nextStep` (passResult.ts) decided: done, requeue after N ms, or
 *                  given up (its declarations failed); `queueOutcomeOf` hands it to the queue, nothing else decides.
 *
 * "Poison" is not a reconcile's answer: a message is poisoned before it gets here (it fails validation, in
 * handleQueueMessage) or by the host, when the invocation throws `maxDequeueCount` times. A chain that gives up after
 * POOLSYNC_MAX_ATTEMPTS ends "failed" on its declarations, for the timer to retry after their retry time.
 */

export interface RunnerDeps {
  /** Step 4: the target's reconcile, under `lease` (checked before each of its writes), over `open`. */
  reconcile(ref: TargetRef, trigger: ReconcileTrigger, lease: LeaseGuard, open: OpenPass): Promise<ReconcileReport>;
  passes: TargetPasses;
  queue: WorkQueue;
  /** Passes that ended badly, for the status view (a pass's last problem of any kind is in its control row). */
  problems: ProblemLog;
  clock: Clock;
  log: Logger;
  leaseTtlMs: number;
  /** The longest a sent ARM write may take to reach ARM, on `clock` (see LeaseGuard). */
  writeFlightMs: number;
  /** How long a write whose answer never came is kept in doubt (POOLSYNC_WRITE_DOUBT_SECONDS). */
  writeDoubtMs?: number;
  newHolderId: () => string;
  /** What one lease holder hands the next (the target's write budgets). */
  handover?: LeaseHandover;
  /** How long a fresh reconcile waits for others to join it (POOLSYNC_GATHER_MS). */
  gatherMs: number;
  /** Declare window on: its length (a leading pass stands down for a window opened behind it). */
  windowMs?: number;
  /** This host is taking in a backlog of declarations (more than a trickle of declare messages in hand). */
  intakeBusy?: () => boolean;
}

/**
 * How long a gathered pass goes back to the queue for while its host takes in a backlog of declarations (the queue's
 * delays are whole seconds). It goes back rather than waiting in the invocation because a waiting pass holds one of
 * the queue trigger's slots: in a burst over more scale sets than the host's `newBatchThreshold`, the windows' passes
 * held every slot, the listener stopped fetching, the backlog's last declarations stayed in the queue, and each of
 * their scale sets made a second model write after the first pass.
 */
export const INTAKE_DEFER_MS = 1_000;
/**
 * The longest this host sends one target's pass back for its intake. Past it the pass runs anyway: a host that never
 * catches up with its declarations still writes them, a window's worth of them at a time.
 */
export const INTAKE_DEFER_MAX_MS = 10_000;
/** The reason a pass sent back for its host's intake gives (result "deferred"). */
export const INTAKE_DEFER_REASON = "its host is taking in a backlog of declarations";

/** What the queue does after a pass. */
export type QueueOutcome = { kind: "done" } | { kind: "requeue-after"; delayMs: number };

/** The report's next step as the queue takes it: a report that asks to come back is requeued after its delay. */
export function queueOutcomeOf(report: ReconcileReport): QueueOutcome {
  return report.requeueAfterMs !== undefined
    ? { kind: "requeue-after", delayMs: report.requeueAfterMs }
    : { kind: "done" };
}

/** What asked for a reconcile, from the reason every producer writes (eventReason, the timer's, the intake's). */
export function triggerSource(reason: string): "event" | "timer" | "declare" | "retry" | "other" {
  if (/^event\b/.test(reason)) return "event";
  if (/^timer\b/.test(reason)) return "timer";
  if (/^declare\b/.test(reason)) return "declare";
  if (/^retry after\b/.test(reason)) return "retry";
  return "other";
}

/** A pass worth its control row's `lastProblem`: it met a 412 or a throttle, or did not end well. */
const worthRecording = (r: ReconcileReport) =>
  r.preconditionFailures > 0 ||
  r.throttles > 0 ||
  r.result === "requeued" ||
  r.result === "failed" ||
  (r.instanceFailures?.length ?? 0) > 0;

export class ReconcileRunner {
  /** Step 1, exposed for draining at shutdown (`idle()`). */
  readonly coalescer: Coalescer<ReconcileTrigger, ReconcileReport>;

  /** Targets whose pass this host sent back for its intake, and since when (for INTAKE_DEFER_MAX_MS). */
  private readonly deferredSince = new Map<string, number>();

  constructor(private readonly deps: RunnerDeps) {
    this.coalescer = new Coalescer<ReconcileTrigger, ReconcileReport>(mergeTriggers, deps.gatherMs, deps.clock.sleep);
  }

  /** Steps 1–5: what a queue message runs. */
  joined(ref: TargetRef, trigger: ReconcileTrigger): Promise<ReconcileReport> {
    // A leading declaration is one of a quiet target with no backlog behind it: it starts without the gather, the
    // latency a lone change sees. What arrives while it runs joins the next pass (the second write the burst targets
    // allow); what arrived before it started opened a window, and it stands down for that window's pass.
    const gather = trigger.leading !== true;
    return this.coalescer.run(ref.key, trigger, (merged) => this.standDownOrRun(ref, merged), { gather });
  }

  /**
   * Step 2: a leading pass with a window opened behind it stands down (the window's pass reads and writes them all); a
   * gathered pass goes back to the queue while its host takes in a backlog of declarations. In a burst a scale set's
   * declarations reach the hosts over the whole intake, and a pass that read before its last one was stored would
   * leave it to a second window, a second model write. Without a backlog (a lone change, a trickle) it runs at once.
   */
  private async standDownOrRun(ref: TargetRef, merged: ReconcileTrigger): Promise<ReconcileReport> {
    if (!merged.leading && this.deps.intakeBusy?.() && this.mayDefer(ref)) {
      // The window stays open (only a pass closes it), so what is stored meanwhile is read by the pass that comes back.
      await this.deps.queue.enqueueReconcile(ref.id, merged.reason, {
        delayMs: INTAKE_DEFER_MS,
        ...(merged.attempt > 0 ? { attempt: merged.attempt } : {}),
        ...(merged.fresh ? { fresh: true } : {}),
      });
      return deferredReport(ref, merged, INTAKE_DEFER_REASON, 0, this.deps.log);
    }
    this.deferredSince.delete(ref.key);
    const justClaimed = merged.claimedAt !== undefined && this.deps.clock.now() - merged.claimedAt < JUST_CLAIMED_MS;
    const windowMs = this.deps.windowMs;
    if (
      merged.leading &&
      !justClaimed &&
      windowMs !== undefined &&
      windowPending(await this.deps.passes.readControl(ref), this.deps.clock.now(), windowMs)
    )
      return deferredReport(
        ref,
        merged,
        "a declare window opened behind this leading declaration: its reconcile writes them all",
        0,
        this.deps.log,
      );
    return this.run(ref, merged);
  }

  /** Whether this host may send the target's pass back once more (not past INTAKE_DEFER_MAX_MS since the first). */
  private mayDefer(ref: TargetRef): boolean {
    const now = this.deps.clock.now();
    for (const [key, since] of this.deferredSince)
      if (now - since > 3 * INTAKE_DEFER_MAX_MS) this.deferredSince.delete(key);
    const since = this.deferredSince.get(ref.key) ?? now;
    this.deferredSince.set(ref.key, since);
    return now - since < INTAKE_DEFER_MAX_MS;
  }

  /** Steps 3–5: one reconcile under the target's lease, its outcome handed to the queue. */
  run(ref: TargetRef, trigger: ReconcileTrigger): Promise<ReconcileReport> {
    const { passes, queue, clock, log, leaseTtlMs, writeFlightMs, newHolderId, handover } = this.deps;
    const attributes = {
      "poolsync.target": ref.id,
      "poolsync.reason": trigger.reason,
      "poolsync.attempt": trigger.attempt,
    };
    return inSpan("poolsync.reconcile", { attributes }, async (span) => {
      const report = await leasedReconcile(
        ref,
        trigger,
        {
          passes,
          queue,
          clock,
          log,
          ttlMs: leaseTtlMs,
          writeFlightMs,
          newHolderId,
          ...(handover ? { handover } : {}),
        },
        (t, lease, open) => this.pass(ref, t, lease, open),
        (report, t) => this.settle(ref, t, report),
      );
      span.setAttributes({
        "poolsync.result": report.result,
        "poolsync.arm.writes": report.armWrites,
        "poolsync.arm.reads": report.armReads,
      });
      return report;
    });
  }

  /** Step 4: the pass of one grant of the lease. */
  private async pass(
    ref: TargetRef,
    trigger: ReconcileTrigger,
    lease: LeaseGuard,
    open: OpenPass,
  ): Promise<ReconcileReport> {
    const report = await this.deps.reconcile(ref, trigger, lease, open);
    const source = triggerSource(trigger.reason);
    recordReconcile(report.result, source, report.durationMs);
    if (report.result === "applied" && report.armWrites > 0 && (source === "event" || source === "timer"))
      recordDriftRepaired(source);
    return report;
  }

  /**
   * Step 5: the attempt chain and the pass's problem go into the control row with the pass's commit; the requeue
   * follows the commit, so the timer knows the chain before its message exists.
   */
  private settle(ref: TargetRef, trigger: ReconcileTrigger, report: ReconcileReport): Settled {
    const { problems, queue, clock, log } = this.deps;
    const now = clock.now();
    const problem = worthRecording(report)
      ? {
          targetId: ref.id,
          at: now,
          result: report.result,
          preconditionFailures: report.preconditionFailures,
          throttles: report.throttles,
          reason: (
            report.reason ??
            (report.instanceFailures?.length
              ? `${report.instanceFailures.length} instance(s) refused their own write`
              : `${report.preconditionFailures} precondition failures resolved by re-reading`)
          ).slice(0, 1_024),
        }
      : undefined;
    const outcome = queueOutcomeOf(report);
    const reason = `retry after: ${report.reason ?? report.result}`.slice(0, 1_024);
    // A wait keeps the chain's number: POOLSYNC_MAX_ATTEMPTS counts what failed, not how long pacing held it.
    const attempt = report.requeueWaits ? trigger.attempt : trigger.attempt + 1;
    // A requeued pass ends its chain, whatever its number (a chain of waits from a fresh request stays at 0).
    const chained = trigger.attempt > 0 || triggerSource(trigger.reason) === "retry";
    return {
      control: (s: ControlState): ControlState => ({
        ...expireDoubts(s, now, this.deps.writeDoubtMs ?? 0),
        ...(problem ? { lastProblem: problem } : {}),
        // A re-enqueued chain ends with a pass that asks nothing more: the timer must not see it as still running.
        attempt:
          outcome.kind === "requeue-after"
            ? { attempt, nextAttemptAt: now + outcome.delayMs, reason }
            : chained
              ? undefined
              : s.attempt,
      }),
      after: async () => {
        if (problem && endedBadly(report))
          await problems
            .record(ref, {
              result: problem.result,
              preconditionFailures: problem.preconditionFailures,
              throttles: problem.throttles,
              reason: problem.reason,
              scaleSetId: ref.id,
              at: new Date(now).toISOString(),
              ...(report.instanceFailures?.length ? { instanceFailures: report.instanceFailures } : {}),
            })
            .catch((err: unknown) =>
              log.warn("problems.record-failed", { targetId: ref.id, error: (err as Error).message }),
            );
        if (outcome.kind === "requeue-after")
          await queue.enqueueReconcile(ref.id, reason, { delayMs: outcome.delayMs, attempt });
      },
    };
  }
}

/**
 * A pass the shared problem log records: failed, sent back by ARM's throttling or a conflict, or with instances ARM
 * refused. Not a requeue of our own pacing (a burst's normal flow) nor 412s resolved by re-reading: those are only in
 * the target's control row, so the log is never written on the hot path.
 */
function endedBadly(r: ReconcileReport): boolean {
  if ((r.instanceFailures?.length ?? 0) > 0 || r.result === "failed") return true;
  return r.result === "requeued" && !/^pacing:/.test(r.reason ?? "");
}
