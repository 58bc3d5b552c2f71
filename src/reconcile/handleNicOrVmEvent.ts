import type { NicOrVmEvent } from "../core/armEvents";
import { inScopes } from "../core/scopes";
import type { EventRow } from "../core/targetPasses";
import { eventReason, type EventDeps, type EventOutcome } from "./resourceEvent";
import { wake } from "./wakeTarget";

/**
 * An event about a NIC or a top-level VM. The event names only that resource; the shared table says which target caches
 * it (a VM target's own NICs, a Flexible scale set's VMs and their NICs), and a VM target is its own. Our own writes are
 * recognised by their client request id; anyone else's invalidates the row and wakes the target, at most once per
 * debounce window. A resource no pass ever read concerns no target.
 */
export async function handleNicOrVmEvent(e: NicOrVmEvent, deps: EventDeps): Promise<EventOutcome> {
  if (!inScopes(deps.scopes, e.target.subscriptionId, e.target.resourceGroup)) return "out-of-scope";
  const reason = eventReason(e);
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
  if (!e.isDeleteOfTarget && deps.ours(e.clientRequestId, e.target.id)) return log("own-write");
  const owner = (await deps.events.ownerOf(e.target)) ?? (e.target.kind === "vm" ? e.target : undefined);
  if (!owner) {
    await deps.unheld?.record({ at: new Date(deps.now()).toISOString(), resourceId: e.target.id, reason });
    return log("unheld");
  }
  const row: EventRow = e.target.kind === "nic" ? { kind: "nic", ref: e.target } : { kind: "vm", ref: e.target };
  if (e.isDeleteOfTarget) {
    const noted = await deps.events.forget(owner, [row], deps.debounceMs);
    return log(
      (await wake(owner, noted, `delete event: ${reason}`, deps, e.id, true)) ? "deleted+reconcile" : "deleted",
    );
  }
  const noted = await deps.events.invalidate(
    owner,
    [row],
    { resourceId: e.target.id, caller: e.caller },
    reason,
    deps.debounceMs,
  );
  if (!noted.held && !noted.declared) {
    await deps.unheld?.record({ at: new Date(deps.now()).toISOString(), resourceId: e.target.id, reason });
    return log("unheld");
  }
  return log((await wake(owner, noted, `event: ${reason}`, deps, e.id)) ? "invalidated+reconcile" : "invalidated");
}
