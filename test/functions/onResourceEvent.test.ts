import { InvocationContext, type EventGridEvent } from "@azure/functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { services } from "../../src/app/services";
import { onResourceEvent } from "../../src/functions/onResourceEvent";
import { DEMO } from "../support/harness";
import { eventGridEvent } from "../support/armEventSamples";
import { scaleSetRef } from "../support/refs";
import { startFunctionWorld, type FunctionWorld } from "./support";

let world: FunctionWorld;
beforeAll(async () => {
  world = await startFunctionWorld({ POOLSYNC_EVENT_DEBOUNCE_SECONDS: "30" });
});
afterAll(async () => {
  await world.stop();
});

const ref = scaleSetRef(DEMO.scaleSetId);
const context = () => new InvocationContext({ invocationId: "inv-event", functionName: "onResourceEvent" });
const event = (resourceUri: string, id: string) =>
  eventGridEvent({
    resourceUri,
    operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
    clientRequestId: "someone-else",
    id,
  }) as unknown as EventGridEvent;
const visibleAndDelayed = async () =>
  (await world.queue.getProperties().catch(() => ({ approximateMessagesCount: 0 }))).approximateMessagesCount ?? 0;

describe("onResourceEvent (Event Grid trigger), called as the host calls it", () => {
  it("another writer's change to a declared scale set marks its cache row stale and enqueues one debounced reconcile", async () => {
    const s = services();
    await s.ready();
    await s.declarations.upsert(ref, {
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      state: "present",
      declaredAt: "2026-12-02T10:00:00.000Z",
      requestId: "r-1",
      declaredBy: QUEUE_DECLARER,
    });
    await onResourceEvent(event(DEMO.scaleSetId, "e-1"), context());
    await onResourceEvent(event(DEMO.scaleSetId, "e-2"), context());
    expect((await s.cache.readEntry(ref))?.stale).toBe(true);
    expect(await visibleAndDelayed()).toBe(1);
  });

  it("an event outside POOLSYNC_SCOPES or a malformed one changes nothing, and never fails the invocation", async () => {
    const outside = DEMO.scaleSetId.replace(DEMO.subscription, "99999999-9999-9999-9999-999999999999");
    await expect(onResourceEvent(event(outside, "e-3"), context())).resolves.toBeUndefined();
    await expect(onResourceEvent({ nonsense: true } as unknown as EventGridEvent, context())).resolves.toBeUndefined();
    expect(await visibleAndDelayed()).toBe(1);
  });
});
