import { classifyEvent } from "../core/armEvents";
import type { InstanceRef, ScaleSetRef, TargetRef } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { handleNicOrVmEvent } from "./handleNicOrVmEvent";
import { eventReason, isOwnWrite, type EventDeps, type EventOutcome } from "./resourceEvent";
import { wake } from "./wakeTarget";

/**
 * What an ARM event does: invalidate the cache rows of what someone wrote (not what we wrote), drop the rows of
 * what was deleted, and wake the reconciler, at most once per debounce window, when the scale set has
 * declarations. Never throws for a bad event: the extension would answer 500 for the whole batch and Event Grid
 * would re-send it for a day.
 *
 * An event is only a hint. Event Grid redelivers for 24 hours and out of order, and anyone who can reach the webhook
 * can send one: a delete event therefore never records "target-deleted" itself. It asks for a reconcile that reads
 * ARM, and only ARM's 404 (or Deleting) records it.
 */

export async function handleResourceEvent(raw: unknown, deps: EventDeps): Promise<EventOutcome> {
  const verdict = classifyEvent(raw);
  if (verdict.kind === "nic-or-vm") return handleNicOrVmEvent(verdict.event, deps);
  if (verdict.kind !== "act") {
    if (verdict.kind === "malformed") deps.log.warn("event.malformed", { reason: verdict.reason });
    return verdict.kind === "malformed" ? "malformed" : "ignored";
  }
  const e = verdict.event;
  const scaleSet: ScaleSetRef = e.target.kind === "instance" ? e.target.scaleSet : e.target;
  if (!inScopes(deps.scopes, scaleSet.subscriptionId, scaleSet.resourceGroup)) {
    // Logged: a subscription filter that lets foreign events through costs a Table-free answer, but should be seen.
    deps.log.info("event", {
      eventId: verdict.event.id,
      type: verdict.event.type,
      resourceId: verdict.event.target.id,
      outcome: "out-of-scope",
    });
    return "out-of-scope";
  }
  const reason = eventReason(e);

  if (e.isDeleteOfTarget) {
    let outcome: EventOutcome = "deleted";
    if (e.target.kind === "scaleSet") {
      // Dropping cached rows is always safe (they are re-read); the declarations' fate is ARM's to tell.
      await deps.cache.evictScaleSet(scaleSet);
      if (await wake(scaleSet, `delete event: ${reason}`, deps, e.id, true)) outcome = "deleted+reconcile";
    } else {
      await deps.cache.evictInstance(e.target);
      // One instance fewer: the scale set changed too (if poolsync holds it at all).
      await invalidate(scaleSet, reason, await isDeclared(scaleSet, deps), deps);
    }
    deps.log.info("event", { eventId: e.id, type: e.type, resourceId: e.target.id, outcome });
    return outcome;
  }

  const entry = await deps.cache.readEntry(e.target);
  if (isOwnWrite(e, entry)) {
    deps.log.info("event", {
      eventId: e.id,
      type: e.type,
      resourceId: e.target.id,
      clientRequestId: e.clientRequestId,
      outcome: "own-write",
    });
    return "own-write";
  }
  const declared = await isDeclared(scaleSet, deps);
  const marked = await invalidate(e.target, reason, declared, deps);
  // An instance write changes its scale set's ETag too, shortly afterwards.
  const scaleSetMarked = e.target.kind === "instance" && (await invalidate(scaleSet, reason, declared, deps));
  if (!marked && !scaleSetMarked) {
    // Nothing held: no row is made for it (a forged event for a made-up ID would otherwise leave one), only counted.
    await deps.unheld?.record({ at: new Date(deps.now()).toISOString(), resourceId: e.target.id, reason });
    deps.log.info("event", { eventId: e.id, type: e.type, resourceId: e.target.id, outcome: "unheld" });
    return "unheld";
  }
  await deps.writers?.record(e.target.id, e.caller);

  const outcome: EventOutcome = (await wake(scaleSet, `event: ${reason}`, deps, e.id))
    ? "invalidated+reconcile"
    : "invalidated";
  deps.log.info("event", {
    eventId: e.id,
    type: e.type,
    resourceId: e.target.id,
    clientRequestId: e.clientRequestId,
    outcome,
  });
  return outcome;
}

const isDeclared = async (ref: TargetRef, deps: EventDeps) => (await deps.declarations.listForTarget(ref)).length > 0;

/**
 * Marks the row stale: for a declared scale set always (a marker on a missing row makes a concurrent create-only
 * store fail, as it must), otherwise only a row that exists. Returns whether poolsync holds the resource.
 */
async function invalidate(
  ref: ScaleSetRef | InstanceRef,
  reason: string,
  declared: boolean,
  deps: EventDeps,
): Promise<boolean> {
  if (!declared) return deps.cache.markStaleIfCached(ref, reason);
  await deps.cache.markStale(ref, reason);
  return true;
}
