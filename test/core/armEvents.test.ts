import { describe, expect, it } from "vitest";
import { classifyEvent, computeTargetOf, nicOrVmTargetOf } from "../../src/core/armEvents";
import { cloudEvent, eventGridEvent } from "../support/armEventSamples";

const RG = "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/flex"; // made up
const NIC = `${RG}/providers/Microsoft.Network/networkInterfaces/web-1-nic`;
const VM = `${RG}/providers/Microsoft.Compute/virtualMachines/web-1`;
const VMSS = `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/web`;

describe("ARM events", () => {
  it("names the NIC a child resource's event is about (an ip configuration changes its NIC)", () => {
    const t = nicOrVmTargetOf(`${NIC}/ipConfigurations/ipconfig1/`);
    expect(t).toMatchObject({ ok: true, value: { kind: "nic", key: NIC.toLowerCase(), name: "web-1-nic" } });
    expect(nicOrVmTargetOf(`${VM}/extensions/cse`)).toMatchObject({ ok: true, value: { kind: "vm", name: "web-1" } });
    expect(nicOrVmTargetOf(`${RG}/providers/Microsoft.Network/loadBalancers/lb`)).toEqual({
      ok: false,
      reason: "not a NIC or VM",
    });
    expect(nicOrVmTargetOf(RG).ok).toBe(false);
  });

  it("names the scale set or instance of a Uniform resource, and refuses anything else", () => {
    expect(computeTargetOf(`${VMSS}/virtualMachines/3/extensions/x`)).toMatchObject({
      ok: true,
      value: { kind: "instance", instanceId: "3" },
    });
    expect(computeTargetOf(`${VMSS}/extensions/x`)).toMatchObject({
      ok: true,
      value: { kind: "scaleSet", name: "web" },
    });
    expect(computeTargetOf(VM)).toEqual({ ok: false, reason: "not a scale set or scale set VM" });
  });

  it("hands a Flexible VM's NIC write on as a NIC-or-VM event, with who wrote it", () => {
    const v = classifyEvent(
      cloudEvent({
        resourceUri: `${NIC}/ipConfigurations/ipconfig1`,
        operationName: "Microsoft.Network/networkInterfaces/write",
        clientRequestId: "theirs-1",
        id: "ev-nic-1",
      }),
    );
    expect(v).toMatchObject({
      kind: "nic-or-vm",
      event: {
        id: "ev-nic-1",
        type: "Microsoft.Resources.ResourceWriteSuccess",
        target: { kind: "nic", key: NIC.toLowerCase() },
        clientRequestId: "theirs-1",
        isDeleteOfTarget: false,
        caller: { appId: "aaaaaaaa-0000-0000-0000-000000000000", eventId: "ev-nic-1" },
      },
    });
  });

  it("counts as the VM's delete only the delete of the VM itself, not of its extension", () => {
    const del = (uri: string) =>
      classifyEvent(
        eventGridEvent({
          type: "Microsoft.Resources.ResourceDeleteSuccess",
          resourceUri: uri,
          operationName: "Microsoft.Compute/virtualMachines/delete",
        }),
      );
    expect(del(VM)).toMatchObject({ kind: "nic-or-vm", event: { target: { kind: "vm" }, isDeleteOfTarget: true } });
    expect(del(`${VM}/extensions/cse`)).toMatchObject({ kind: "nic-or-vm", event: { isDeleteOfTarget: false } });
  });

  it("reads the event's time from either schema and keeps the caller's correlation", () => {
    const opts = { resourceUri: VMSS, operationName: "x", time: "2026-12-03T04:05:06.000Z" };
    for (const raw of [eventGridEvent(opts), JSON.stringify(cloudEvent(opts))]) {
      const v = classifyEvent(raw);
      expect(v.kind === "act" && v.event.time).toBe("2026-12-03T04:05:06.000Z");
      expect(v.kind === "act" && v.event.correlationId).toBe("7ddf2a3b-3f4c-4d44-9e1c-111111111111");
    }
  });
});
