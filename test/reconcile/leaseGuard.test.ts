import { describe, expect, it } from "vitest";
import { LeaseGuard } from "../../src/reconcile/leaseGuard";
import { manualClock } from "../support/harness";

/** A pass's view of its own lease before each ARM write, on a clock the test moves (pure). */
describe("LeaseGuard", () => {
  const TTL = 60_000;
  const FLIGHT = 30_000;

  function guard(renewals: boolean[]) {
    const clock = manualClock();
    const asked: number[] = [];
    const g = new LeaseGuard(clock, TTL, FLIGHT, () => {
      asked.push(clock.now());
      return Promise.resolve(renewals.shift() ?? false);
    });
    return { clock, asked, g };
  }

  it("lets a write go without renewing while the lease outlasts a write's flight", async () => {
    const { clock, asked, g } = guard([]);
    g.held(clock.now());
    clock.advance(TTL - FLIGHT - 1);
    expect(await g.ensureHeld()).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it("renews first when less than a flight is left, and counts the renewal from when it was sent", async () => {
    const { clock, asked, g } = guard([true]);
    g.held(clock.now());
    clock.advance(TTL - FLIGHT);
    expect(await g.ensureHeld()).toBeUndefined();
    expect(asked).toEqual([clock.now()]);
    // The renewal holds for a whole TTL from its sending: no second renewal until a flight is left again.
    clock.advance(TTL - FLIGHT - 1);
    expect(await g.ensureHeld()).toBeUndefined();
    expect(asked).toHaveLength(1);
  });

  it("stops the pass with a counted come-back when the renewal finds the lease taken, and for good", async () => {
    const { clock, asked, g } = guard([false, true]);
    g.held(clock.now());
    clock.advance(TTL);
    const back = await g.ensureHeld();
    expect(back).toMatchObject({ cause: "retry", reason: expect.stringContaining("lease lapsed") });
    expect(g.isLost).toBe(true);
    // A lost lease is not taken back by a later grant or renewal: this pass must not write again.
    g.held(clock.now());
    expect(await g.ensureHeld()).toMatchObject({ cause: "retry" });
    expect(asked).toHaveLength(1);
  });

  it("a lease never taken is renewed before the first write", async () => {
    const { asked, g } = guard([true]);
    expect(await g.ensureHeld()).toBeUndefined();
    expect(asked).toHaveLength(1);
  });
});
