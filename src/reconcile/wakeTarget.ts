import type { TargetRef } from "../core/resourceIds";
import { recordEvent } from "../telemetry/metrics";
import type { EventDeps } from "./resourceEvent";

/**
 * One reconcile per debounce window for a scale set with declarations (after a delete: reading ARM). Delayed to
 * the window's end: every event inside the window is then covered by this one reconcile. A claim that kept losing
 * races enqueues anyway: a reconcile too many costs a few reads, none at all leaves a change unrepaired.
 */
export async function wake(
  target: TargetRef,
  reason: string,
  deps: EventDeps,
  eventId: string,
  fresh = false,
): Promise<boolean> {
  const declared = await deps.declarations.listForTarget(target);
  if (declared.length === 0) return false;
  const claim = await deps.debounce.claim(target, deps.debounceMs);
  if (claim === "within-window") {
    recordEvent("debounced", "within-window");
    return false;
  }
  if (claim === "contended")
    deps.log.warn("event.debounce-contended", { eventId, scaleSetId: target.id, outcome: "enqueued anyway" });
  await deps.queue.enqueueReconcile(target.id, reason.slice(0, 256), {
    delayMs: deps.debounceMs,
    ...(fresh ? { fresh: true } : {}),
  });
  return true;
}
