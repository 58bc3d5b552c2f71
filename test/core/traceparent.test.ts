import { z } from "zod";
import { describe, expect, it } from "vitest";
import {
  parseQueueMessage,
  reasonOf,
  reasonWithTrace,
  traceparentOf,
  type QueueMessage,
} from "../../src/core/messages";

const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const SS =
  "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss";
const POOL =
  "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/p";

/**
 * The previous version's reconcile schema, as it was before this one: strict, no traceparent field. A rolling
 * deployment runs both on one queue, so every message this version writes must pass it.
 */
const previousReconcile = z.strictObject({
  v: z.literal(1),
  kind: z.literal("reconcile"),
  scaleSetId: z.string().optional(),
  targetId: z.string().optional(),
  reason: z.string().min(1).max(256),
  attempt: z.number().int().min(1).max(1000).optional(),
  fresh: z.boolean().optional(),
  leading: z.boolean().optional(),
});

const parsed = (m: unknown): QueueMessage => {
  const r = parseQueueMessage(m);
  if (!r.ok) throw new Error(r.reason);
  return r.message;
};

describe("a message's trace context", () => {
  it("is written as a reason suffix the previous version's strict schema accepts, and read back by this one", () => {
    const long = "declare present " + POOL + " ".repeat(100) + "x";
    const written = { v: 1, kind: "reconcile", scaleSetId: SS, reason: reasonWithTrace("leading: " + long, TP) };
    expect(previousReconcile.safeParse(written).success).toBe(true);
    expect(written.reason.length).toBeLessThanOrEqual(256);
    const m = parsed(written);
    expect(traceparentOf(m)).toBe(TP);
    expect(m.kind === "reconcile" && reasonOf(m).startsWith("declare present")).toBe(true);
    expect(m.kind === "reconcile" && reasonOf(m).includes("traceparent")).toBe(false);
  });

  it("is also read from the traceparent field (what the next version writes), on declare and reconcile messages", () => {
    expect(traceparentOf(parsed({ v: 1, kind: "reconcile", scaleSetId: SS, reason: "r", traceparent: TP }))).toBe(TP);
    expect(
      traceparentOf(
        parsed({ v: 1, kind: "declare", scaleSetId: SS, backendPoolId: POOL, state: "present", traceparent: TP }),
      ),
    ).toBe(TP);
    // The previous version would poison a field it does not know: that is why this version does not write it yet.
    expect(
      previousReconcile.safeParse({ v: 1, kind: "reconcile", scaleSetId: SS, reason: "r", traceparent: TP }).success,
    ).toBe(false);
  });

  it("a malformed traceparent field is refused with the field and the reason; no trace, no suffix", () => {
    expect(parseQueueMessage({ v: 1, kind: "reconcile", scaleSetId: SS, reason: "r", traceparent: "00-zz" })).toEqual({
      ok: false,
      reason: "traceparent: must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)",
    });
    expect(reasonWithTrace("r", undefined)).toBe("r");
    expect(
      traceparentOf(
        parsed({
          v: 1,
          kind: "reconcile",
          scaleSetId: SS,
          reason: "r [traceparent 00-00000000000000000000000000000000-00f067aa0ba902b7-01]",
        }),
      ),
    ).toBeUndefined();
  });
});
