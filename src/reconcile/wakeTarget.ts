import type { EventNoted } from "../core/targetPasses";
import type { TargetRef } from "../core/resourceIds";
import { recordEvent } from "../telemetry/metrics";
import type { EventDeps } from "./resourceEvent";

/**
 * The pass an event asks for, once its store write claimed the target's debounce window: delayed to the window's end,
 * so every event inside the window is covered by this one pass (after a delete, one that reads ARM).
 */
export async function wake(
  target: TargetRef,
  noted: EventNoted,
  reason: string,
  deps: EventDeps,
  eventId: string,
  fresh = false,
): Promise<boolean> {
  if (!noted.declared) return false;
  if (!noted.claimed) {
    recordEvent("debounced", "within-window");
    return false;
  }
  if (noted.contended) {
    const now = deps.now();
    if (deps.contendedWakes?.covered(target.id, now)) {
      recordEvent("debounced", "contended-covered");
      return false;
    }
    deps.log.warn("event.debounce-contended", { eventId, scaleSetId: target.id, outcome: "enqueued anyway" });
    deps.contendedWakes?.noteWoken(target.id, now, deps.debounceMs);
  }
  await deps.queue.enqueueReconcile(target.id, reason.slice(0, 256), {
    delayMs: deps.debounceMs,
    // A claim that lost took the event's cache marks with it (one transaction): the pass must not trust the cache.
    ...(fresh || noted.contended ? { fresh: true } : {}),
  });
  return true;
}
