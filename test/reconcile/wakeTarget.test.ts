import { beforeEach, describe, expect, it } from "vitest";
import { wake } from "../../src/reconcile/wakeTarget";
import { eventDepsOnAzurite } from "../support/eventDeps";
import { scaleSetRef } from "../support/refs";

/** The pass an event asks for once its store write claimed the debounce window: on a real work queue (Azurite). */
const RG = "/subscriptions/00000000-0000-0000-0000-0000000000b9/resourceGroups/rg";
const REF = scaleSetRef(`${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-wake`);
const DEBOUNCE_MS = 30_000;

describe("wake", () => {
  let e: Awaited<ReturnType<typeof eventDepsOnAzurite>>;
  beforeEach(async () => {
    e = await eventDepsOnAzurite("wake", RG, DEBOUNCE_MS);
  });

  it("asks for no pass for a target without declarations, or inside a window another event claimed", async () => {
    expect(await wake(REF, { held: true, declared: false, claimed: true }, "event", e.deps, "evt-1")).toBe(false);
    expect(await wake(REF, { held: true, declared: true, claimed: false }, "event", e.deps, "evt-2")).toBe(false);
    expect(e.enqueued()).toEqual([]);
  });

  it("a claimed window's pass is delayed to the window's end, with its reason; fresh only after a delete", async () => {
    const noted = { held: true, declared: true, claimed: true };
    expect(await wake(REF, noted, `event: ${"x".repeat(300)}`, e.deps, "evt-3")).toBe(true);
    expect(await wake(REF, noted, "delete event", e.deps, "evt-4", true)).toBe(true);
    const [first, second] = e.enqueued();
    expect(first).toMatchObject({
      kind: "reconcile",
      scaleSetId: REF.id,
      visibilityTimeoutSeconds: DEBOUNCE_MS / 1000,
    });
    expect(first!.fresh).toBeUndefined();
    expect(String(first!.reason)).toContain(`event: ${"x".repeat(200)}`);
    expect(String(first!.reason)).not.toContain("x".repeat(300));
    expect(second).toMatchObject({ fresh: true, reason: expect.stringContaining("delete event") });
  });

  it("after a lost claim this host wakes the target once per window, reading ARM, and says so", async () => {
    const lost = { held: true, declared: true, claimed: true, contended: true };
    expect(await wake(REF, lost, "event", e.deps, "evt-5")).toBe(true);
    expect(await wake(REF, lost, "event", e.deps, "evt-6")).toBe(false);
    e.t.clock.advance(DEBOUNCE_MS);
    expect(await wake(REF, lost, "event", e.deps, "evt-7")).toBe(true);
    expect(e.enqueued()).toEqual([expect.objectContaining({ fresh: true }), expect.objectContaining({ fresh: true })]);
    expect(e.t.log.lines.filter((l) => l.event === "event.debounce-contended").map((l) => l.eventId)).toEqual([
      "evt-5",
      "evt-7",
    ]);
  });
});
