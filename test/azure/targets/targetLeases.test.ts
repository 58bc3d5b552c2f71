import { describe, expect, it } from "vitest";
import { TargetLeases } from "../../../src/azure/targets/targetLeases";
import { freshTargetStore } from "../../support/freshTable";
import { manualClock } from "../../support/harness";
import { scaleSetRef } from "../../support/refs";

const REF = scaleSetRef(
  "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000463/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss",
);
const TTL = 30_000;

describe("TargetLeases on Azurite", () => {
  it("gives a target's lease to one holder at a time, and asks the holder for another pass once", async () => {
    const clock = manualClock();
    const leases = new TargetLeases(await freshTargetStore(clock.now));
    const a = await leases.acquire(REF, "host-a", TTL, false, false);
    expect(a.kind).toBe("acquired");
    const b1 = await leases.acquire(REF, "host-b", TTL, false, false);
    const b2 = await leases.acquire(REF, "host-c", TTL, false, false);
    expect(b1).toEqual({ kind: "held", firstToAsk: true, expiresAt: clock.now() + TTL });
    expect(b2).toMatchObject({ kind: "held", firstToAsk: false });
  });

  it("lets another holder take a lease that ran out, and its old holder's renewal then fails", async () => {
    const clock = manualClock();
    const store = await freshTargetStore(clock.now);
    const leases = new TargetLeases(store);
    const a = await leases.acquire(REF, "host-a", TTL, false, false);
    if (a.kind !== "acquired") throw new Error("host-a should hold the lease");
    clock.advance(TTL / 2);
    expect(await leases.renew(REF, "host-a", TTL, a.control)).toBe(true);
    // The caller's handle is the row as now stored: its next write needs no read first.
    expect(a.control.etag).toBe((await store.readControl(REF)).etag);
    expect(a.control.state.lease.expiresAt).toBe(clock.now() + TTL);
    clock.advance(TTL - 1);
    expect((await leases.acquire(REF, "host-b", TTL, false, false)).kind).toBe("held");
    clock.advance(2);
    expect((await leases.acquire(REF, "host-b", TTL, false, false)).kind).toBe("acquired");
    expect(await leases.renew(REF, "host-a", TTL, a.control)).toBe(false);
  });

  it("closes the declare window in the same write when asked", async () => {
    const clock = manualClock();
    const store = await freshTargetStore(clock.now);
    await store.updateControl(REF, (s) => ({
      state: { ...s, window: { openedAt: clock.now(), claimant: "x", leading: false, closed: false } },
      result: 0,
    }));
    const taken = await new TargetLeases(store).acquire(REF, "host-a", TTL, false, true);
    expect(taken.kind === "acquired" && taken.snapshot.control.window?.closed).toBe(true);
    expect((await store.readControl(REF)).state.window?.closed).toBe(true);
  });
});
