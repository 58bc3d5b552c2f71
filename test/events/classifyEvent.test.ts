import { describe, expect, it } from "vitest";
import { classifyEvent } from "../../src/core/armEvents";
import { cloudEvent, eventGridEvent } from "../support/armEventSamples";

const VMSS =
  "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0";

describe("classifyEvent", () => {
  it.each([
    ["Event Grid", eventGridEvent],
    ["CloudEvents", cloudEvent],
  ])("reads a scale set write in the %s schema", (_, make) => {
    const v = classifyEvent(
      make({
        resourceUri: VMSS,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
        clientRequestId: "ours-1",
      }),
    );
    expect(v).toMatchObject({
      kind: "act",
      event: {
        type: "Microsoft.Resources.ResourceWriteSuccess",
        target: { kind: "scaleSet", key: VMSS.toLowerCase() },
        clientRequestId: "ours-1",
        isDeleteOfTarget: false,
      },
    });
  });

  it("maps an instance's child resource to the instance, and odd casing and trailing slashes to the same key", () => {
    const odd = `${VMSS.replace("resourceGroups", "resourcegroups").toUpperCase().replace("/SUBSCRIPTIONS", "/subscriptions")}/virtualMachines/1/networkInterfaces/nic-0/`;
    const v = classifyEvent(
      eventGridEvent({
        resourceUri: odd,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write",
      }),
    );
    expect(v.kind === "act" && v.event.target.kind === "instance" && v.event.target.key).toBe(
      `${VMSS}/virtualMachines/1`.toLowerCase(),
    );
    expect(v.kind === "act" && v.event.clientRequestId).toBeUndefined(); // the docs' samples carry no httpRequest
  });

  it("tells a delete of the scale set from a delete of its extension", () => {
    const del = classifyEvent(
      eventGridEvent({
        type: "Microsoft.Resources.ResourceDeleteSuccess",
        resourceUri: VMSS,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/delete",
      }),
    );
    expect(del.kind === "act" && del.event.isDeleteOfTarget).toBe(true);
    const ext = classifyEvent(
      eventGridEvent({
        type: "Microsoft.Resources.ResourceDeleteSuccess",
        resourceUri: `${VMSS}/extensions/cse`,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/extensions/delete",
      }),
    );
    expect(ext).toMatchObject({ kind: "act", event: { isDeleteOfTarget: false, target: { kind: "scaleSet" } } });
  });

  it.each([
    ["{not json", { kind: "malformed", reason: "event is not JSON" }],
    [[], { kind: "malformed", reason: "event is not a JSON object" }],
    [
      { id: "1", data: {} },
      { kind: "malformed", reason: "eventType: missing (neither Event Grid nor CloudEvents schema)" },
    ],
    [
      { id: "1", eventType: "Microsoft.Resources.ResourceWriteSuccess" },
      { kind: "malformed", reason: "data: missing or not an object" },
    ],
    [
      { id: "1", eventType: "Microsoft.Resources.ResourceWriteSuccess", data: {} },
      { kind: "malformed", reason: "data.resourceUri: missing (and no subject)" },
    ],
    [
      { id: "1", eventType: "Microsoft.Storage.BlobCreated", subject: "/x", data: {} },
      { kind: "ignore", reason: "event type Microsoft.Storage.BlobCreated is not an ARM resource event" },
    ],
    [
      eventGridEvent({
        resourceUri:
          "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/etag/providers/Microsoft.Network/loadBalancers/lb",
        operationName: "Microsoft.Network/loadBalancers/write",
      }),
      { kind: "ignore" },
    ],
    [eventGridEvent({ resourceUri: `${VMSS.replace("etag-k8s-mp-0", "..")}`, operationName: "x" }), { kind: "ignore" }],
  ])("refuses %j with the reason, without throwing", (raw, verdict) => {
    expect(classifyEvent(raw)).toMatchObject(verdict);
  });
});
