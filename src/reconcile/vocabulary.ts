import type { LeaseGuard } from "./leaseGuard";
import type { WriteDoubts } from "../core/control";
import type { Config } from "../config";
import type { Clock, ComputePort, DeclarationStore, Logger, ModelCache, NetworkPort } from "../core/ports";
import type { PassEvents } from "../core/history";
import type { TargetRef } from "../core/resourceIds";
import type { CallStats } from "./callStats";
import type { DriftDeps } from "./driftWatch";
import type { WritePacer } from "../pacing/writePacer";
import type { SharedWriteBudget } from "../pacing/sharedWriteBudget";
import { comeBack, type ComeBack } from "./passResult";

/**
 * The words every reconcile speaks, whatever its target (scale set or VM): what asked for it (the trigger), what it
 * needs (its deps), and what it answers (the report), with the two ways a report is made.
 */

export interface ReconcileDeps {
  compute: ComputePort;
  /** NICs: Flexible scale sets' VMs and standalone VMs. */
  network: NetworkPort;
  declarations: DeclarationStore;
  cache: ModelCache;
  clock: Clock;
  log: Logger;
  config: Pick<
    Config,
    | "scopes"
    | "bindings"
    | "cacheTtlMs"
    | "maxPreconditionRetries"
    | "instanceConcurrency"
    | "instanceBodyMaxAgeMs"
    | "maxAttempts"
    | "failedRetryMs"
    | "pacingMaxWaitMs"
  >;
  pacer: WritePacer;
  /** Every host's shared write budgets (pacing/sharedWriteBudget); without it, this host's pacer alone. */
  sharedBudget?: Pick<SharedWriteBudget, "take">;
  /** The write token the pass took before it read (reconcile/writeBudget.ts `payAhead`), by lower-case resource ID. */
  credit?: Set<string>;
  /** A client request id for a write to this resource (recognisable in its events: azure/requestIds.ts). */
  newRequestId: (resourceId: string) => string;
  random?: () => number;
  /** Drift attribution (off when absent). */
  drift?: DriftDeps;
  /** The pass's lease, checked before each write (absent outside a leased pass: plans, tests of one pass). */
  lease?: Pick<LeaseGuard, "ensureHeld">;
  /** The target's writes in doubt: recorded with the pass's commit, and holding back what they could undo. */
  doubts?: WriteDoubts;
  /** The pass's events (its writes, drifts, a failed or requeued end): its target's history is made of them. */
  events?: PassEvents;
}

// In core/control beside WriteInDoubt, so that ifMatchWrite need not import this file (which imports driftWatch,
// which imports vmNics, which imports ifMatchWrite: a cycle).
export type { WriteDoubts } from "../core/control";

export type ReconcileResult =
  | "applied"
  | "unchanged"
  | "no-declarations"
  | "refused"
  | "target-deleted"
  | "target-deleting"
  | "requeued"
  | "failed"
  /** Another host held the scale set's reconcile lease: it runs the pass (see leasedReconcile). */
  | "deferred";

export interface ReconcileReport {
  /** The scale set or VM reconciled. */
  targetId: string;
  trigger: string;
  result: ReconcileResult;
  declarations: number;
  armReads: number;
  armWrites: number;
  preconditionFailures: number;
  throttles: number;
  instancesWritten: number;
  durationMs: number;
  /** When the pass comes back, as `nextStep` decided (absent: done, or given up). */
  requeueAfterMs?: number;
  /** The come-back is a wait only (pacing, Network RP busy, a write in doubt): the next attempt keeps this number. */
  requeueWaits?: true;
  reason?: string;
  /** Instances ARM refused a write to (400/403 about their own configuration): their problem, not the declarations'. */
  instanceFailures?: { instanceId: string; reason: string }[];
}

export interface ReconcileTrigger {
  reason: string;
  /** 0 for a fresh request; n for the n-th re-enqueued attempt. */
  attempt: number;
  /** Read the model and the instances from ARM even where the cache has fresh rows. */
  fresh?: boolean;
  /**
   * Use only cache rows read after this time (by this host's clock): a pass about to finish a declaration from
   * older rows runs again with the time it began, so what it finishes rests on what ARM answered since (issue 41).
   */
  provenSince?: number;
  /**
   * A quiet scale set's first declaration, reconciled at once: it stands down when a declare window opened behind it
   * meanwhile (a burst), whose reconcile writes them all.
   */
  leading?: boolean;
  /**
   * A leading declaration claimed in this very invocation: when, by this host's clock. Its pass starting within
   * `JUST_CLAIMED_MS` needs no look for a window opened behind it (nothing had the time to; a race that did costs the
   * window's pass a read, never a declaration).
   */
  claimedAt?: number;
}

/** Which cache rows a pass may count as ARM's word: those read since this time (undefined: none, any fresh row serves). */
export function observedSinceOf(trigger: ReconcileTrigger): number | undefined {
  return trigger.fresh ? Number.POSITIVE_INFINITY : trigger.provenSince;
}

/** How soon after its claim a leading pass skips the look for a window behind it: the gather's length. */
export const JUST_CLAIMED_MS = 250;

/** What one reconcile does for every request that joined it: all their reasons, the most careful reading. */
export function mergeTriggers(a: ReconcileTrigger, b: ReconcileTrigger): ReconcileTrigger {
  const reason = a.reason === b.reason ? a.reason : `${a.reason}; ${b.reason}`;
  return {
    reason: reason.slice(0, 512),
    attempt: Math.max(a.attempt, b.attempt),
    ...(a.fresh || b.fresh ? { fresh: true } : {}),
    // Only a pass that serves nothing but leading declarations may stand down for a window.
    ...(a.leading && b.leading ? { leading: true } : {}),
    ...(a.leading && b.leading && a.claimedAt !== undefined && b.claimedAt !== undefined
      ? { claimedAt: Math.min(a.claimedAt, b.claimedAt) }
      : {}),
  };
}

/** The report of one pass over a target, logged as `reconcile` with its ARM calls and how long it took. */
export function reporter(
  target: TargetRef,
  trigger: ReconcileTrigger,
  stats: CallStats,
  deps: { clock: Clock; log: Logger; events?: PassEvents | undefined },
  written: () => number,
): (result: ReconcileResult, declarations: number, extra?: Partial<ReconcileReport>) => ReconcileReport {
  const started = deps.clock.now();
  return (result, declarations, extra = {}) => {
    const r: ReconcileReport = {
      targetId: target.id,
      trigger: triggerText(trigger),
      result,
      declarations,
      armReads: stats.reads,
      armWrites: stats.writes,
      preconditionFailures: stats.preconditionFailures,
      throttles: stats.throttles,
      instancesWritten: written(),
      durationMs: deps.clock.now() - started,
      ...extra,
    };
    deps.log.info("reconcile", logFields(r));
    if (r.result === "failed" || r.result === "requeued")
      deps.events?.emit({ kind: "ended", result: r.result, reason: r.reason ?? "" });
    return r;
  };
}

/** A pass that left the work to another (a lease holder, a declare window): no ARM call, logged like any report. */
export function deferredReport(
  target: TargetRef,
  trigger: ReconcileTrigger,
  reason: string,
  durationMs: number,
  log: Logger,
): ReconcileReport {
  const report: ReconcileReport = {
    targetId: target.id,
    trigger: triggerText(trigger),
    result: "deferred",
    declarations: 0,
    armReads: 0,
    armWrites: 0,
    preconditionFailures: 0,
    throttles: 0,
    instancesWritten: 0,
    durationMs,
    reason,
  };
  log.info("reconcile", logFields(report));
  return report;
}

/** The log keeps `scaleSetId` beside `targetId`: queries and alerts written before VMs were targets read it. */
const logFields = (r: ReconcileReport) => ({ ...r, scaleSetId: r.targetId });

/** The trigger as the report and the log show it (a leading pass says so, as it always has). */
const triggerText = (t: ReconcileTrigger) => (t.leading ? `leading: ${t.reason}` : t.reason);

/**
 * How long the declarations judged on these resources must wait before being reported finished: a write of ours whose
 * answer never came may still land on one of them (0: none can).
 */
export function doubtHoldMs(
  deps: Pick<ReconcileDeps, "doubts">,
  resources: ReadonlyArray<{ id: string; etag: string }>,
): number {
  if (!deps.doubts) return 0;
  return resources.reduce((m, r) => Math.max(m, deps.doubts!.remainingMs(r.id, r.etag)), 0);
}

/** The reason a pass gives when it holds back a finish for a write of its own that may still land. */
export const DOUBT_REASON = "a write of ours whose answer never came may still land: finishing waits for it";

/** A pass that held back a finish for `doubtMs` comes back then (a wait: as often as it takes). */
export const doubtHold = (doubtMs: number): ComeBack | undefined =>
  doubtMs > 0 ? comeBack("wait", doubtMs, DOUBT_REASON) : undefined;
