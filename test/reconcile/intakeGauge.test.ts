import { describe, expect, it } from "vitest";
import { IntakeGauge } from "../../src/reconcile/intakeGauge";

describe("IntakeGauge", () => {
  it("a trickle is not a backlog; more than the trickle is, and stays one for the settle time after it drains", () => {
    let now = 1_000;
    const gauge = new IntakeGauge({ now: () => now }, 2, 500);
    gauge.took();
    gauge.took();
    expect(gauge.busy()).toBe(false);
    gauge.took();
    expect(gauge.busy()).toBe(true);
    gauge.left();
    gauge.left();
    gauge.left();
    // Drained, but another host may still be storing the same burst's last declarations.
    now += 499;
    expect(gauge.busy()).toBe(true);
    now += 1;
    expect(gauge.busy()).toBe(false);
  });

  it("a trickle that never was a backlog leaves no tail", () => {
    let now = 0;
    const gauge = new IntakeGauge({ now: () => now }, 4, 1_000);
    for (let i = 0; i < 10; i++) {
      gauge.took();
      gauge.left();
      now += 10;
      expect(gauge.busy()).toBe(false);
    }
  });
});
