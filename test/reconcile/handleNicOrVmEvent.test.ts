import { beforeEach, describe, expect, it } from "vitest";
import type { NicOrVmEvent } from "../../src/core/armEvents";
import { parseNicId, parseVmId, type NicRef, type VmRef } from "../../src/core/resourceIds";
import { handleNicOrVmEvent } from "../../src/reconcile/handleNicOrVmEvent";
import { eventDepsOnAzurite } from "../support/eventDeps";

/** An event about a NIC or a VM, led to the target that declared it: the tables and the queue on Azurite. */
const SUB = "00000000-0000-0000-0000-0000000000ba";
const RG = `/subscriptions/${SUB}/resourceGroups/rg`;
const POOL = `${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool-a`;
const ref = <T>(r: { ok: true; value: T } | { ok: false; reason: string }): T => {
  if (!r.ok) throw new Error(`test bug: ${r.reason}`);
  return r.value;
};
const VM = ref(parseVmId(`${RG}/providers/Microsoft.Compute/virtualMachines/vm-ev`));
const NIC = ref(parseNicId(`${RG}/providers/Microsoft.Network/networkInterfaces/vm-ev-nic`));

let n = 0;
function event(target: VmRef | NicRef, extra: Partial<NicOrVmEvent> = {}): NicOrVmEvent {
  const id = `evt-${++n}`;
  return {
    id,
    type: "Microsoft.Resources.ResourceWriteSuccess",
    time: "2026-12-02T10:00:00Z",
    target,
    operationName: `${target.kind === "vm" ? "Microsoft.Compute/virtualMachines" : "Microsoft.Network/networkInterfaces"}/write`,
    clientRequestId: `client-${id}`,
    correlationId: undefined,
    isDeleteOfTarget: false,
    caller: {
      name: "someone",
      id: undefined,
      appId: undefined,
      operation: undefined,
      correlationId: undefined,
      eventId: id,
      at: undefined,
    },
    ...extra,
  };
}

describe("handleNicOrVmEvent", () => {
  let e: Awaited<ReturnType<typeof eventDepsOnAzurite>>;
  beforeEach(async () => {
    e = await eventDepsOnAzurite("nicvm", `/subscriptions/${SUB}`);
  });

  it("leaves alone what is outside POOLSYNC_SCOPES and what poolsync wrote itself", async () => {
    const elsewhere = ref(parseVmId(VM.id.replace(SUB, "00000000-0000-0000-0000-0000000000ff")));
    expect(await handleNicOrVmEvent(event(elsewhere), e.deps)).toBe("out-of-scope");
    const own = event(VM);
    e.ours.add(own.clientRequestId!);
    expect(await handleNicOrVmEvent(own, e.deps)).toBe("own-write");
    expect(e.enqueued()).toEqual([]);
  });

  it("a NIC no pass ever read concerns no target: counted as unheld, no pass asked", async () => {
    expect(await handleNicOrVmEvent(event(NIC), e.deps)).toBe("unheld");
    expect((await e.unheld.summary()).recent).toEqual([expect.objectContaining({ resourceId: NIC.id })]);
    expect(e.enqueued()).toEqual([]);
  });

  it("a declared VM's write wakes it once per debounce window; an event about its NIC leads to it", async () => {
    await e.t.declare(VM, [{ backendPoolId: POOL }]);
    await e.t.owners.remember(NIC, VM);
    expect(await handleNicOrVmEvent(event(VM), e.deps)).toBe("invalidated+reconcile");
    expect(await handleNicOrVmEvent(event(NIC), e.deps)).toBe("invalidated");
    e.t.clock.advance(e.deps.debounceMs);
    expect(await handleNicOrVmEvent(event(NIC), e.deps)).toBe("invalidated+reconcile");
    expect(e.enqueued().map((l) => l.scaleSetId)).toEqual([VM.id, VM.id]);
  });

  it("a declared VM's delete asks for a pass that reads ARM, even for a request id of ours", async () => {
    await e.t.declare(VM, [{ backendPoolId: POOL }]);
    const deleted = event(VM, { type: "Microsoft.Resources.ResourceDeleteSuccess", isDeleteOfTarget: true });
    e.ours.add(deleted.clientRequestId!);
    expect(await handleNicOrVmEvent(deleted, e.deps)).toBe("deleted+reconcile");
    expect(e.enqueued()).toEqual([expect.objectContaining({ scaleSetId: VM.id, fresh: true })]);
  });
});
