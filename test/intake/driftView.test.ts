import { describe, expect, it } from "vitest";
import { declarationKey } from "../../src/core/declarations";
import { driftAnswer, withDrift, type MembershipWithDrift } from "../../src/intake/driftView";
import { observeScaleSet } from "../../src/intake/observedState";
import { DRIFT, OPTIONS, POOL_A, POOL_B, stored, VMSS } from "./viewFixtures";

/** src/intake/driftView.ts: each membership shown with its own most recent drift, answered as docs/api.md says. */
const drift = DRIFT;

describe("withDrift", () => {
  const view = observeScaleSet(
    VMSS,
    [stored(), stored({ backendPoolId: POOL_B })],
    { scaleSet: undefined, instances: new Map() },
    OPTIONS,
  );

  it("puts a drift on the membership of its pool and ip configuration only, whatever the ID's casing", () => {
    const drifts = new Map([[declarationKey({ backendPoolId: POOL_A.toUpperCase(), ipConfiguration: "" }), drift]]);
    const shown = withDrift(view, drifts).memberships as MembershipWithDrift[];
    const byPool = Object.fromEntries(shown.map((m) => [m.backendPoolId, m.drift]));
    expect(byPool[POOL_A]).toMatchObject({ by: drift.by, source: "event", repairedAt: null });
    expect(byPool[POOL_B]).toBeNull();
  });

  it("answers a drift not repaired yet with repairedAt null, and a repaired one with its time", () => {
    expect(driftAnswer(drift).repairedAt).toBeNull();
    expect(driftAnswer({ ...drift, repairedAt: "2026-12-02T09:31:00.000Z" }).repairedAt).toBe(
      "2026-12-02T09:31:00.000Z",
    );
  });

  it("keeps the rest of the view as it was", () => {
    const shown = withDrift(view, new Map());
    expect({ ...shown, memberships: [] }).toEqual({ ...view, memberships: [] });
    expect((shown.memberships as MembershipWithDrift[]).every((m) => m.drift === null)).toBe(true);
  });
});
