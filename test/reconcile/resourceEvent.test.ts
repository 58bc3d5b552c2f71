import { describe, expect, it } from "vitest";
import { eventReason } from "../../src/reconcile/resourceEvent";
import type { ArmResourceEvent } from "../../src/core/armEvents";
import { scaleSetRef } from "../support/refs";

/** The reason an ARM event gives the rows it marks stale and the pass it asks for (pure). */
describe("eventReason", () => {
  const event: ArmResourceEvent = {
    id: "evt-1",
    type: "Microsoft.Resources.ResourceWriteSuccess",
    time: "2026-12-02T10:00:00Z",
    target: scaleSetRef(
      "/subscriptions/00000000-0000-0000-0000-0000000000b4/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-e",
    ),
    operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
    clientRequestId: undefined,
    correlationId: undefined,
    isDeleteOfTarget: false,
    caller: {
      name: undefined,
      id: undefined,
      appId: undefined,
      operation: undefined,
      correlationId: undefined,
      eventId: "evt-1",
      at: undefined,
    },
  };

  it("names the event, its short type, its operation and its time", () => {
    expect(eventReason(event)).toBe(
      "event evt-1 ResourceWriteSuccess Microsoft.Compute/virtualMachineScaleSets/write at 2026-12-02T10:00:00Z",
    );
  });

  it("says the time is unknown when Event Grid gave none", () => {
    expect(eventReason({ ...event, time: undefined })).toMatch(/ at \?$/);
  });
});
