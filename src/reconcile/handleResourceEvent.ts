import { classifyEvent } from "../core/armEvents";
import type { ScaleSetRef } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import type { EventRow } from "../core/targetPasses";
import { handleNicOrVmEvent } from "./handleNicOrVmEvent";
import { eventReason, type EventDeps, type EventOutcome } from "./resourceEvent";
import { wake } from "./wakeTarget";

/**
 * What an ARM event does: invalidate the cache rows of what someone else wrote (not what we wrote: our client request
 * ids say so, with no read), drop the rows of what was deleted, and wake the reconciler, at most once per debounce
 * window, when the target has declarations: one read and one transaction of the target's partition. Never throws for a
 * bad event: the extension would answer 500 for the whole batch and Event Grid would re-send it for a day.
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
  const log = (outcome: EventOutcome) => {
    deps.log.info("event", {
      eventId: e.id,
      type: e.type,
      resourceId: e.target.id,
      clientRequestId: e.clientRequestId,
      outcome,
    });
    return outcome;
  };
  if (!inScopes(deps.scopes, scaleSet.subscriptionId, scaleSet.resourceGroup))
    // Logged: a subscription filter that lets foreign events through costs a Table-free answer, but should be seen.
    return log("out-of-scope");
  const reason = eventReason(e);

  if (e.isDeleteOfTarget) {
    if (e.target.kind === "scaleSet") {
      // Dropping cached rows is always safe (they are re-read); the declarations' fate is ARM's to tell.
      const noted = await deps.events.forget(scaleSet, "all", deps.debounceMs);
      return log(
        (await wake(scaleSet, noted, `delete event: ${reason}`, deps, e.id, true)) ? "deleted+reconcile" : "deleted",
      );
    }
    // One instance fewer: its row goes, and the scale set changed too.
    await deps.events.forget(scaleSet, [{ kind: "instance", instanceId: e.target.instanceId }], deps.debounceMs);
    const noted = await deps.events.invalidate(scaleSet, [{ kind: "model" }], undefined, reason, deps.debounceMs);
    await wake(scaleSet, noted, `event: ${reason}`, deps, e.id);
    return log("deleted");
  }

  if (deps.ours(e.clientRequestId, e.target.id)) return log("own-write");
  // An instance write changes its scale set's ETag too, shortly afterwards.
  const rows: EventRow[] =
    e.target.kind === "instance"
      ? [{ kind: "instance", instanceId: e.target.instanceId }, { kind: "model" }]
      : [{ kind: "model" }];
  const noted = await deps.events.invalidate(
    scaleSet,
    rows,
    { resourceId: e.target.id, caller: e.caller },
    reason,
    deps.debounceMs,
  );
  if (!noted.held && !noted.declared) {
    // Nothing held: no row is made for it (a forged event for a made-up ID would otherwise leave one), only counted.
    await deps.unheld?.record({ at: new Date(deps.now()).toISOString(), resourceId: e.target.id, reason });
    return log("unheld");
  }
  return log((await wake(scaleSet, noted, `event: ${reason}`, deps, e.id)) ? "invalidated+reconcile" : "invalidated");
}
