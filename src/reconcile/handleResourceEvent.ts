import { classifyEvent, type ArmResourceEvent } from "../core/armEvents";
import type { DeclarationStore, Logger, ModelCache, WorkQueue } from "../core/ports";
import type { ScaleSetRef } from "../core/resourceIds";
import { inScopes, type Scope } from "../core/scopes";
import { handleNicOrVmEvent } from "./handleNicOrVmEvent";

/**
 * What an ARM event does: invalidate the cache rows of what someone wrote (not what we wrote), drop the rows of
 * what was deleted, and wake the reconciler, at most once per debounce window, when the scale set has
 * declarations. Never throws for a bad event: the extension would answer 500 for the whole batch and Event Grid
 * would re-send it for a day.
 */

export interface EventDeps {
  scopes: readonly Scope[];
  cache: ModelCache;
  declarations: DeclarationStore;
  queue: WorkQueue;
  log: Logger;
  now: () => number;
  debounceMs: number;
}

export type EventOutcome =
  | "malformed"
  | "ignored"
  | "out-of-scope"
  | "own-write"
  | "invalidated"
  | "invalidated+reconcile"
  | "deleted";

const reasonOf = (e: ArmResourceEvent) => `event ${e.id} ${e.type.replace("Microsoft.Resources.", "")} ${e.operationName} at ${e.time ?? "?"}`;

export async function handleResourceEvent(raw: unknown, deps: EventDeps): Promise<EventOutcome> {
  const verdict = classifyEvent(raw);
  if (verdict.kind === "nic-or-vm") return handleNicOrVmEvent(verdict.event, deps);
  if (verdict.kind !== "act") {
    if (verdict.kind === "malformed") deps.log.warn("event.malformed", { reason: verdict.reason });
    return verdict.kind === "malformed" ? "malformed" : "ignored";
  }
  const e = verdict.event;
  const scaleSet: ScaleSetRef = e.target.kind === "instance" ? e.target.scaleSet : e.target;
  if (!inScopes(deps.scopes, scaleSet.subscriptionId, scaleSet.resourceGroup)) return "out-of-scope";
  const reason = reasonOf(e);

  if (e.isDeleteOfTarget) {
    if (e.target.kind === "scaleSet") {
      await deps.cache.evictScaleSet(scaleSet);
      const declared = await deps.declarations.listForScaleSet(scaleSet);
      const at = new Date(deps.now()).toISOString();
      await Promise.all(declared.map((d) => deps.declarations.recordOutcome(scaleSet, d, { kind: "target-deleted", reason, at })));
    } else {
      await deps.cache.evictInstance(e.target);
      await deps.cache.markStale(scaleSet, reason); // one instance fewer: the scale set changed too
    }
    deps.log.info("event", { eventId: e.id, type: e.type, resourceId: e.target.id, outcome: "deleted" });
    return "deleted";
  }

  const entry = await deps.cache.readEntry(e.target);
  const ours = e.clientRequestId !== undefined && entry !== undefined && (entry.ourClientRequestId === e.clientRequestId || entry.pendingClientRequestId === e.clientRequestId);
  if (ours) {
    deps.log.info("event", { eventId: e.id, type: e.type, resourceId: e.target.id, clientRequestId: e.clientRequestId, outcome: "own-write" });
    return "own-write";
  }
  await deps.cache.markStale(e.target, reason);
  // An instance write changes its scale set's ETag too, shortly afterwards.
  if (e.target.kind === "instance") await deps.cache.markStale(scaleSet, reason);

  let outcome: EventOutcome = "invalidated";
  const declared = await deps.declarations.listForScaleSet(scaleSet);
  if (declared.length > 0 && (await deps.cache.claimEventReconcile(scaleSet, deps.debounceMs))) {
    // Delayed to the window's end: every event inside the window is then covered by this one reconcile.
    await deps.queue.enqueueReconcile(scaleSet.id, `event: ${reason}`.slice(0, 256), { delayMs: deps.debounceMs });
    outcome = "invalidated+reconcile";
  }
  deps.log.info("event", { eventId: e.id, type: e.type, resourceId: e.target.id, clientRequestId: e.clientRequestId, outcome });
  return outcome;
}
