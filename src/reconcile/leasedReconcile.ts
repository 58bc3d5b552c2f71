import { closeWindow, releaseLease, type ControlState } from "../core/control";
import type { Clock, Logger, WorkQueue } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import type { OpenPass, TargetPasses } from "../core/targetPasses";
import { LeaseGuard } from "./leaseGuard";
import { deferredReport, type ReconcileReport, type ReconcileTrigger } from "./vocabulary";

/**
 * One pass over a target at a time across every host. The pass runs only under the target's lease, taken with one read
 * of its partition and one conditional write of its control row; a host that finds the lease held asks the holder for
 * one more pass (its declarations are already stored, so that pass reads them) and answers "deferred" instead of
 * reading and writing ARM alongside it. The pass's writes are committed with the lease's release, fenced by the control
 * row: a pass whose lease lapsed writes nothing. Each grant of the lease runs one pass: the holder releases only when
 * nobody asked; otherwise its release is the next grant, and that pass runs.
 * The first host to ask also enqueues a pass for just after the lease would expire: if the holder died, that message
 * finds the lease free and does the work, nothing is lost.
 */

/** What one lease holder hands the next with the lease (the target's write budgets as it knows them). */
export interface LeaseHandover {
  snapshot(ref: TargetRef): string;
  restore(text: string, ref: TargetRef): void;
}

export interface LeasedDeps {
  passes: TargetPasses;
  queue: WorkQueue;
  clock: Clock;
  log: Logger;
  ttlMs: number;
  /** The longest a sent ARM write may take to reach ARM, on `clock`: a write goes out only with that much lease left. */
  writeFlightMs: number;
  newHolderId: () => string;
  handover?: LeaseHandover;
  /** Grants beyond the first one holder takes for others' asks before it hands the rest to the queue. */
  maxExtraPasses?: number;
}

/** What a finished pass adds to the control row (its attempt chain, its problem) and does once committed. */
export interface Settled {
  control(s: ControlState): ControlState;
  /** After the commit (an enqueue must follow what it counts). */
  after(): Promise<void>;
}

/** The reason of the safety-net pass a deferring host leaves for after the lease's expiry. */
const LEASE_CHECK = "lease check: ";
const isLeaseCheck = (t: ReconcileTrigger) => t.reason.startsWith(LEASE_CHECK);
const stripLeaseCheck = (reason: string) =>
  reason.startsWith(LEASE_CHECK) ? reason.slice(LEASE_CHECK.length) : reason;

/** One grant of the lease: the pass it runs, with the trigger it runs for, over the partition it opened. */
interface Grant {
  trigger: ReconcileTrigger;
  open: OpenPass;
  /** The trigger of the invocation's first grant (what every later grant's pass inherits). */
  first: ReconcileTrigger;
  /** Grants given so far in this invocation (the first is 0). */
  index: number;
}

export async function leasedReconcile(
  ref: TargetRef,
  trigger: ReconcileTrigger,
  deps: LeasedDeps,
  pass: (trigger: ReconcileTrigger, lease: LeaseGuard, open: OpenPass) => Promise<ReconcileReport>,
  settle: (report: ReconcileReport, trigger: ReconcileTrigger) => Settled,
): Promise<ReconcileReport> {
  const holder = deps.newHolderId();
  const started = deps.clock.now();
  // Any pass but a leading one closes the declare window as it takes the lease, before it reads: a declaration stored
  // before is in what it reads, one stored after opens a new window.
  const take = await deps.passes.acquire(ref, holder, deps.ttlMs, trigger.fresh === true, trigger.leading !== true);
  if (take.kind === "held") return deferToHolder(ref, trigger, take, started, deps);

  if (take.handover && deps.handover) {
    try {
      deps.handover.restore(take.handover, ref);
    } catch (err) {
      deps.log.warn("reconcile.lease", { scaleSetId: ref.id, outcome: "handover unreadable", error: String(err) });
    }
  }
  let grant: Grant = { trigger, open: take.pass, first: trigger, index: 0 };
  const lease = new LeaseGuard(deps.clock, deps.ttlMs, deps.writeFlightMs, () => grant.open.renew(deps.ttlMs));
  lease.held(started);
  const renewal = keepRenewed(ref, lease, () => grant.open, deps);
  try {
    for (;;) {
      const report = await pass(grant.trigger, lease, grant.open);
      const next = await endGrant(ref, holder, grant, report, lease, deps, settle(report, grant.trigger));
      if (!next) return report;
      grant = next;
    }
  } catch (err) {
    // Let go at once, so the retry of this message or theirs can take it.
    await deps.passes.releaseNow(ref, holder, deps.handover?.snapshot(ref)).catch(() => undefined);
    throw err;
  } finally {
    renewal.abort();
  }
}

/**
 * The lease is held elsewhere: ask the holder for one more pass (the asking is in `acquire`), leave the safety net,
 * and answer "deferred".
 */
async function deferToHolder(
  ref: TargetRef,
  trigger: ReconcileTrigger,
  take: { expiresAt: number; firstToAsk: boolean },
  started: number,
  deps: LeasedDeps,
): Promise<ReconcileReport> {
  // The safety net is carried on while the lease is held: a lease check that finds the holder still at work (it
  // renewed) leaves the next one, or a holder that dies after it would leave the pass to nobody.
  if (take.firstToAsk || isLeaseCheck(trigger)) {
    // Lands after the lease's expiry: a live holder has run the pass by then (and this finds nothing to do).
    const delayMs = Math.max(0, take.expiresAt - deps.clock.now()) + 1000;
    await deps.queue.enqueueReconcile(ref.id, `${LEASE_CHECK}${stripLeaseCheck(trigger.reason)}`, {
      delayMs,
      ...(trigger.fresh ? { fresh: true } : {}),
    });
  }
  return deferredReport(
    ref,
    trigger,
    take.firstToAsk
      ? "another host holds the reconcile lease: asked it for one more pass"
      : "another host holds the reconcile lease and already owes a pass",
    deps.clock.now() - started,
    deps.log,
  );
}

/**
 * Renewed at a third of the period, so two late renewals still keep it; on the injected clock, so a test (or a
 * time-scaled benchmark) renews on the same time the lease expires on. Abort to stop.
 */
function keepRenewed(ref: TargetRef, lease: LeaseGuard, open: () => OpenPass, deps: LeasedDeps): AbortController {
  const renewal = new AbortController();
  const periodMs = Math.max(1000, deps.ttlMs / 3);
  void (async () => {
    for (;;) {
      const due = deps.clock.now() + periodMs;
      await deps.clock.sleep(periodMs, renewal.signal);
      // A clock that returns at once without time passing (stopped) cannot pace renewals: stop rather than spin.
      if (renewal.signal.aborted || deps.clock.now() < due) return;
      try {
        const sentAt = deps.clock.now();
        if (await open().renew(deps.ttlMs)) lease.held(sentAt);
        else lease.lost();
      } catch (err) {
        deps.log.warn("reconcile.lease", { scaleSetId: ref.id, outcome: "renew failed", error: String(err) });
      }
    }
  })();
  return renewal;
}

/**
 * Commits the grant's pass with the lease's release. When another pass was asked for meanwhile the release is a new
 * grant instead (the lease kept, the window closed with it), up to `maxExtraPasses`; past them the queue takes the
 * next pass. Undefined: the lease is let go (or was lost), nothing more runs in this invocation.
 */
async function endGrant(
  ref: TargetRef,
  holder: string,
  grant: Grant,
  report: ReconcileReport,
  lease: LeaseGuard,
  deps: LeasedDeps,
  settled: Settled,
): Promise<Grant | undefined> {
  const last = grant.index >= (deps.maxExtraPasses ?? 5);
  let again: { fresh: boolean } | undefined;
  const releasedAt = deps.clock.now();
  const committed = await grant.open.commit((s) => {
    // Not ours any more (it lapsed and another host took it): that host's pass covers this one; nothing is written.
    if (s.lease.holder !== holder) return "abort";
    again = s.lease.wanted ? { fresh: s.lease.wantedFresh } : undefined;
    const r = releaseLease(
      settled.control(s),
      holder,
      deps.clock.now(),
      last ? 0 : deps.ttlMs,
      deps.handover?.snapshot(ref),
    );
    // Kept for one more pass, which reads next: the window closes with it.
    return r.again ? closeWindow(r.state) : (r.state ?? "abort");
  });
  if (committed === undefined) {
    lease.lost();
    deps.log.warn("reconcile.lease", {
      scaleSetId: ref.id,
      outcome: "lease lost before the pass's commit: nothing written",
    });
    return undefined;
  }
  await settled.after();
  if (!again) return undefined;
  const asked: { fresh: boolean } = again;
  if (last) {
    // Asked again and again (a steady stream of changes): the queue takes the next pass, this invocation ends.
    await deps.queue.enqueueReconcile(
      ref.id,
      "passes asked while the lease was held",
      asked.fresh ? { fresh: true } : {},
    );
    return undefined;
  }
  lease.held(releasedAt);
  deps.log.info("reconcile.lease", { scaleSetId: ref.id, outcome: "another pass asked while held" });
  const { first } = grant;
  return {
    trigger: {
      reason: "asked by another host while the lease was held",
      attempt: first.attempt,
      ...(asked.fresh || first.fresh ? { fresh: true } : {}),
    },
    open: await grant.open.reopen(),
    first,
    index: grant.index + 1,
  };
}
