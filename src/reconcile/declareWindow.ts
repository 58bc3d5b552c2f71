import type { DeclareWindows, WorkQueue } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";

/**
 * Gathers the declarations of one scale set into one reconcile, across instances: the first declaration opens a
 * window and enqueues one reconcile invisible for the window's length; the others only join it. So a burst of 50
 * makes one write of the model and one per instance, where reconciling per message made one per batch.
 *
 * Why a joiner is safe to complete its message: it stored its declaration before it looked at the window, and
 * the reconcile cannot read the declarations before the window ends. Joining stops `SKEW_ALLOWANCE_MS` early,
 * so an instance whose clock runs up to that much behind the opener's still never joins a reconcile that has read.
 */
export const SKEW_ALLOWANCE_MS = 1_000;

export const joinableMs = (windowMs: number) => windowMs - Math.min(SKEW_ALLOWANCE_MS, windowMs / 2);

export interface DeclareWindowDeps {
  windows: DeclareWindows;
  queue: WorkQueue;
  windowMs: number;
}

export type Scheduled = "scheduled" | "joined";

/** `claimant` is the same on a redelivery (the queue message id, the request id), so a lost enqueue is redone. */
export async function scheduleDeclared(ref: TargetRef, claimant: string, reason: string, deps: DeclareWindowDeps): Promise<Scheduled> {
  if (deps.windowMs <= 0) {
    await deps.queue.enqueueReconcile(ref.id, reason);
    return "scheduled";
  }
  if ((await deps.windows.claim(ref, claimant, deps.windowMs, joinableMs(deps.windowMs))) === "joined") return "joined";
  await deps.queue.enqueueReconcile(ref.id, `gathered: ${reason}`, { delayMs: deps.windowMs });
  return "scheduled";
}
