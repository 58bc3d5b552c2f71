import type { WindowClaim } from "../core/control";
import type { WorkQueue } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";

/**
 * Gathers the declarations of one scale set into few reconciles, across instances, without making a lone change
 * wait (a leading and a trailing edge). The first declaration of a quiet scale set reconciles at once; one that
 * follows within `quietMs` opens a window and enqueues one reconcile (invisible for the window's length, or visible at
 * once when the host is busy with the scale set or a backlog), and the others join it until a pass of the scale set
 * closes the window, just before it reads the declarations. The leading reconcile starts at once, without the
 * coalescer's gather, and stands down if a window opened behind it before it started (its declaration is stored, and
 * the window's reconcile reads after it, as for a joiner).
 *
 * Why the window is joinable until its pass runs, not for a fixed time, and its reconcile visible at once when busy: a
 * change that follows a running pass joins the next pass at once (the reconcile waits behind the running one,
 * in-process or on the lease), and in a burst the reconcile sits behind every declaration already queued, so a scale
 * set whose declarations reach the trigger over many seconds (16 at a time, behind the leaders' passes) still makes one
 * window, not one per joinable second: two model writes at most, the leader's and the window's, where a fixed
 * window made one per second of the burst's intake.
 *
 * A host with more than `LEADS_WITH_MESSAGES_IN_HAND` queue messages in hand, or already running a pass of the scale
 * set, leads nothing: it is working through a backlog, and a leader would write the few declarations it has while
 * the rest of its scale set's wait in the queue, holding a slot of the trigger meanwhile.
 *
 * Why a joiner is safe to complete its message: it stored its declaration before it found the window open, and
 * every pass closes the window before it reads. No clock is compared, so no skew allowance is needed.
 * Nothing joins a leading reconcile: it reads at once.
 */
/**
 * How long an open window may be joined (and its opener's redelivery enqueue again): only for liveness, never for
 * safety, which the close gives. Under the timer's 10 minutes: a declaration whose reconcile was lost is asked for
 * again by the timer; a burst's intake may keep a window's reconcile waiting minutes behind it.
 */
export const joinableMs = (windowMs: number) => Math.max(5 * 60_000, 30 * windowMs);

/**
 * A host with more queue messages than this in hand is working through a backlog (a burst), not a lone change: a
 * declaration then opens or joins a window, whose reconcile waits behind the backlog, instead of leading a pass that
 * would hold one of the trigger's slots while the rest of its scale set's declarations are still in the queue.
 */
export const LEADS_WITH_MESSAGES_IN_HAND = 4;

/** A scale set with no window opened for this long is quiet: its next declaration leads. */
export const quietMs = (windowMs: number) => 2 * windowMs;

export type Scheduled = "leading" | "scheduled" | "joined";

/**
 * What a batch's window claim asks for, enqueued once for the batch: "opened" enqueues the window's pass (visible at
 * once when the host is busy: it waits behind that anyway), "leading" enqueues a leading pass unless the caller runs it
 * itself (the queue trigger, in the same invocation), "joined" nothing (a pass already scheduled reads it).
 */
export async function scheduleClaim(
  ref: TargetRef,
  claim: WindowClaim,
  reason: string,
  deps: { queue: WorkQueue; windowMs: number; busy: boolean; runsLeading: boolean },
): Promise<Scheduled> {
  if (claim === "joined") return "joined";
  if (claim === "leading") {
    if (!deps.runsLeading) await deps.queue.enqueueReconcile(ref.id, reason, { leading: true });
    return "leading";
  }
  await deps.queue.enqueueReconcile(ref.id, `gathered: ${reason}`, deps.busy ? {} : { delayMs: deps.windowMs });
  return "scheduled";
}
