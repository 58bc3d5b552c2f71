import { describe, expect, it } from "vitest";
import { parseQueueMessage } from "../../src/core/messages";

const SUB = "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d";
const scaleSetId = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss`;
const backendPoolId = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/be`;
const declare = { v: 1, kind: "declare", scaleSetId, backendPoolId, state: "present" };

describe("queue message schema v1", () => {
  it("accepts a declare as an object or as JSON text", () => {
    expect(parseQueueMessage(declare)).toEqual({ ok: true, message: declare });
    expect(
      parseQueueMessage(JSON.stringify({ ...declare, ipConfiguration: "nic/ipConfig0", requestId: "r-1" })).ok,
    ).toBe(true);
    expect(parseQueueMessage({ v: 1, kind: "reconcile", scaleSetId, reason: "timer", attempt: 2 }).ok).toBe(true);
  });

  it.each([
    ["not json", "message is not JSON"],
    [[1, 2], "message is not a JSON object"],
    [{ ...declare, v: 2 }, "v: unknown schema version 2 (this poolsync reads 1)"],
    [{ ...declare, kind: "delete" }, 'kind: unknown message kind "delete" (declare or reconcile)'],
    [{ ...declare, extra: 1 }, "extra: unknown field"],
    [{ ...declare, state: "maybe" }, 'state: must be "present" or "absent"'],
    [
      {
        ...declare,
        scaleSetId: scaleSetId.replace("Microsoft.Compute/virtualMachineScaleSets", "Microsoft.Web/sites"),
      },
      'scaleSetId: names provider type "Microsoft.Web/sites", not Microsoft.Compute/virtualMachineScaleSets',
    ],
    [{ ...declare, backendPoolId: `${backendPoolId}/../x` }, 'backendPoolId: must not contain "." or ".." segments'],
    [
      { ...declare, ipConfiguration: "a/b/c" },
      'ipConfiguration: must be an ip configuration name, or "nicConfiguration/ipConfiguration"',
    ],
    ["x".repeat(70_000), "message is 70000 characters, over 16384"],
    [{ ...declare, v: undefined }, "v: is required (this poolsync reads 1)"],
    [{ ...declare, kind: undefined }, "kind: is required (declare or reconcile)"],
    [{ ...declare, state: undefined }, "state: is required"],
    [
      Buffer.from([0xff, 0xfe, 0x00, 0x81]),
      "message is 4 bytes that are not UTF-8 text (expected base64 of a JSON object)",
    ],
  ])("refuses %j with the field and the reason", (body, reason) => {
    expect(parseQueueMessage(body)).toEqual({ ok: false, reason });
  });
});
