import type { NicOrVmEvent } from "../core/armEvents";
import type { NicModel, VmModel } from "../core/models";
import { parseTargetId, parseVmId, type TargetRef, type VmRef } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { eventReason, isOwnWrite, type EventDeps, type EventOutcome } from "./resourceEvent";
import { wake } from "./wakeTarget";

/**
 * An event about a NIC or a top-level VM. The event names only that resource; its cache row (written when a
 * reconcile read it) says whose it is: a NIC row holds the NIC with its VM, a VM row its Flexible scale set. Our
 * own NIC writes are recognised by client request id; anyone else's invalidates the row and wakes the target
 * that declared it, at most once per debounce window. A resource no reconcile ever read concerns no target.
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
  const entry = await deps.cache.readEntry(e.target);
  const owner = await ownerOf(e.target, entry?.model as NicModel | VmModel | undefined, deps);

  if (e.isDeleteOfTarget) {
    await deps.cache.evictResource(e.target);
    if (owner) await wake(owner, `delete event: ${reason}`, deps, e.id, true);
    return log("deleted");
  }
  if (isOwnWrite(e, entry)) return log("own-write");
  if (entry) await deps.cache.markStale(e.target, reason);
  if (entry) await deps.writers?.record(e.target.id, e.caller);
  return log(owner && (await wake(owner, `event: ${reason}`, deps, e.id)) ? "invalidated+reconcile" : "invalidated");
}

/** The target whose declarations this NIC or VM serves: the VM itself when declared, else its Flexible scale set. */
async function ownerOf(
  ref: NicOrVmEvent["target"],
  model: NicModel | VmModel | undefined,
  deps: EventDeps,
): Promise<TargetRef | undefined> {
  let vmRef: VmRef | undefined;
  let vm: VmModel | undefined;
  if (ref.kind === "vm") {
    vmRef = ref;
    vm = model as VmModel | undefined;
  } else {
    const vmId = (model as NicModel | undefined)?.nic.virtualMachine;
    const parsed = parseVmId(typeof vmId === "object" && vmId !== null ? (vmId as { id?: unknown }).id : undefined);
    if (!parsed.ok) return undefined;
    vmRef = parsed.value;
    vm = (await deps.cache.readEntry(vmRef))?.model as VmModel | undefined;
  }
  if ((await deps.declarations.listForTarget(vmRef)).length > 0) return vmRef;
  const scaleSet = vm?.scaleSetId ? parseTargetId(vm.scaleSetId) : undefined;
  return scaleSet?.ok ? scaleSet.value : undefined;
}
