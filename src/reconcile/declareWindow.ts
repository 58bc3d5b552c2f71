import type { DeclareWindows, WorkQueue } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";

/**
 * Gathers the declarations of one scale set into few reconciles, across instances, without making a lone change
 * wait (a leading and a trailing edge). The first declaration of a quiet scale set reconciles at once; one that
 * follows within `quietMs` opens a window and enqueues one reconcile invisible for the window's length, and the
 * others only join it. The leading reconcile gathers briefly first and stands down if a window opened behind it
 * meanwhile (its declaration is stored, and the window's reconcile reads after it, as for a joiner). So a burst of 50
 * makes one write of the model and one per instance (two, if its second declaration comes only after the leader's
 * gather), where reconciling per message made one per batch; and a change arriving alone is written as soon as a
 * change applied at once would be.
 *
 * Why a joiner is safe to complete its message: it stored its declaration before it looked at the window, and
 * the reconcile cannot read the declarations before the window ends. Joining stops `SKEW_ALLOWANCE_MS` early,
 * so an instance whose clock runs up to that much behind the opener's still never joins a reconcile that has read.
 * Nothing joins a leading reconcile: it reads at once.
 */
export const SKEW_ALLOWANCE_MS = 1_000;

export const joinableMs = (windowMs: number) => windowMs - Math.min(SKEW_ALLOWANCE_MS, windowMs / 2);

/** A scale set with no window opened for this long is quiet: its next declaration leads. */
export const quietMs = (windowMs: number) => 2 * windowMs;

export interface DeclareWindowDeps {
  windows: DeclareWindows;
  queue: WorkQueue;
  windowMs: number;
  /** The caller reconciles a leading declaration itself (the queue trigger, in the same invocation): no enqueue. */
  reconcilesLeading?: boolean;
}

export type Scheduled = "leading" | "scheduled" | "joined";

/** `claimant` is the same on a redelivery (the queue message id, the request id), so a lost enqueue is redone. */
export async function scheduleDeclared(ref: TargetRef, claimant: string, reason: string, deps: DeclareWindowDeps): Promise<Scheduled> {
  if (deps.windowMs <= 0) {
    await deps.queue.enqueueReconcile(ref.id, reason);
    return "scheduled";
  }
  const claimed = await deps.windows.claim(ref, claimant, { windowMs: deps.windowMs, joinableMs: joinableMs(deps.windowMs), quietMs: quietMs(deps.windowMs) });
  if (claimed === "joined") return "joined";
  if (claimed === "leading") {
    if (!deps.reconcilesLeading) await deps.queue.enqueueReconcile(ref.id, reason, { leading: true });
    return "leading";
  }
  await deps.queue.enqueueReconcile(ref.id, `gathered: ${reason}`, { delayMs: deps.windowMs });
  return "scheduled";
}
