import type { Clock, Logger, ReconcileLeases, WorkQueue } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { LeaseGuard } from "./leaseGuard";
import { deferredReport, type ReconcileReport, type ReconcileTrigger } from "./vocabulary";

/**
 * One reconcile of a scale set at a time across every host. The pass runs only under the scale set's lease; a host
 * that finds the lease held asks the holder for one more pass (its declarations are already in the table, so that
 * pass reads them) and answers "deferred" instead of reading and writing ARM alongside it. The holder releases only
 * when nobody asked; otherwise it runs again. The first host to ask also enqueues a reconcile for just after the
 * lease would expire: if the holder died, that message finds the lease free and does the work, nothing is lost.
 */

/** What one lease holder hands the next with the lease (the target's write budgets as it knows them). */
export interface LeaseHandover {
  snapshot(ref: TargetRef): string;
  restore(text: string, ref: TargetRef): void;
}

export interface LeasedDeps {
  leases: ReconcileLeases;
  queue: WorkQueue;
  clock: Clock;
  log: Logger;
  ttlMs: number;
  /** The longest a sent ARM write may take to reach ARM, on `clock`: a write goes out only with that much lease left. */
  writeFlightMs: number;
  newHolderId: () => string;
  handover?: LeaseHandover;
  /** Extra passes one holder runs for others before it hands the rest to the queue. */
  maxExtraPasses?: number;
}

/** The reason of the safety-net reconcile a deferring host leaves for after the lease's expiry. */
const LEASE_CHECK = "lease check: ";
const isLeaseCheck = (t: ReconcileTrigger) => t.reason.startsWith(LEASE_CHECK);
const stripLeaseCheck = (reason: string) =>
  reason.startsWith(LEASE_CHECK) ? reason.slice(LEASE_CHECK.length) : reason;

export async function leasedReconcile(
  ref: TargetRef,
  trigger: ReconcileTrigger,
  deps: LeasedDeps,
  pass: (trigger: ReconcileTrigger, lease: LeaseGuard) => Promise<ReconcileReport>,
): Promise<ReconcileReport> {
  const holder = deps.newHolderId();
  const started = deps.clock.now();
  const take = await deps.leases.acquire(ref, holder, deps.ttlMs, trigger.fresh === true);
  const lease = new LeaseGuard(deps.clock, deps.ttlMs, deps.writeFlightMs, () =>
    deps.leases.renew(ref, holder, deps.ttlMs),
  );
  if (take.kind === "held") {
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

  if (take.handover && deps.handover) {
    try {
      deps.handover.restore(take.handover, ref);
    } catch (err) {
      deps.log.warn("reconcile.lease", { scaleSetId: ref.id, outcome: "handover unreadable", error: String(err) });
    }
  }
  const handover = () => deps.handover?.snapshot(ref);
  lease.held(started);

  // Renewed at a third of the period, so two late renewals still keep it; on the injected clock, so a test (or a
  // time-scaled benchmark) renews on the same time the lease expires on.
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
        if (await deps.leases.renew(ref, holder, deps.ttlMs)) lease.held(sentAt);
        else lease.lost();
      } catch (err) {
        deps.log.warn("reconcile.lease", { scaleSetId: ref.id, outcome: "renew failed", error: String(err) });
      }
    }
  })();
  try {
    let report = await pass(trigger, lease);
    const maxExtra = deps.maxExtraPasses ?? 5;
    for (let extra = 0; ; extra++) {
      if (lease.isLost) break;
      const releasedAt = deps.clock.now();
      const next = await deps.leases.release(ref, holder, deps.ttlMs, handover());
      if (!next.again) break;
      // Kept for one more pass: renewed by that release.
      lease.held(releasedAt);
      if (extra >= maxExtra) {
        // Asked again and again (a steady stream of changes): the queue takes the next pass, this invocation ends.
        await deps.leases.release(ref, holder, 0, handover());
        await deps.queue.enqueueReconcile(
          ref.id,
          "passes asked while the lease was held",
          next.fresh ? { fresh: true } : {},
        );
        break;
      }
      deps.log.info("reconcile.lease", { scaleSetId: ref.id, outcome: "another pass asked while held" });
      report = await pass(
        {
          reason: "asked by another host while the lease was held",
          attempt: trigger.attempt,
          ...(next.fresh || trigger.fresh ? { fresh: true } : {}),
        },
        lease,
      );
    }
    return report;
  } catch (err) {
    // Let go at once (expired, if someone asked meanwhile), so the retry of this message or theirs can take it.
    await deps.leases.release(ref, holder, 0, handover()).catch(() => undefined);
    throw err;
  } finally {
    renewal.abort();
  }
}
