import { beforeEach, describe, expect, it } from "vitest";
import { OutcomeRecorder } from "../../src/reconcile/recordOutcomes";
import { scaleSetRef } from "../support/refs";
import { targetTableOnAzurite } from "../support/targetTable";

/** What a pass tells each declaration, written to the declaration's row in the targets table (Azurite). */
const REF = scaleSetRef(
  "/subscriptions/00000000-0000-0000-0000-0000000000b5/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-out",
);
const POOL =
  "/subscriptions/00000000-0000-0000-0000-0000000000b5/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool-a";

describe("OutcomeRecorder", () => {
  let t: Awaited<ReturnType<typeof targetTableOnAzurite>>;
  let recorder: OutcomeRecorder;
  const stored = async () => (await t.declarations.listForTarget(REF))[0]!;

  beforeEach(async () => {
    t = await targetTableOnAzurite("outcomes");
    recorder = new OutcomeRecorder(REF, t.declarations, t.clock);
    await t.declare(REF, [{ backendPoolId: POOL }]);
  });

  it("stores the outcome on the declaration's row, at the clock's time", async () => {
    await recorder.record(await stored(), { kind: "applied", appliedEtag: "W/7" });
    expect((await stored()).outcome).toEqual({
      kind: "applied",
      appliedEtag: "W/7",
      at: new Date(t.clock.now()).toISOString(),
    });
  });

  it("writes nothing when the outcome is the one stored: a pass that changes nothing costs no Table write", async () => {
    await recorder.record(await stored(), { kind: "applied", appliedEtag: "W/7" });
    const before = await stored();
    t.clock.advance(60_000);
    await recorder.record(before, { kind: "applied", appliedEtag: "W/7" });
    const after = await stored();
    expect(after.rowEtag).toBe(before.rowEtag);
    expect(after.outcome.at).toBe(before.outcome.at);
  });

  it("a failure again moves its retry time on, so the timer does not retry it on every run", async () => {
    await recorder.record(await stored(), recorder.failed("ARM said no", 60_000));
    const first = await stored();
    expect(first.outcome).toMatchObject({ kind: "failed", reason: "ARM said no" });
    expect(Date.parse(first.outcome.retryAt!)).toBe(t.clock.now() + 60_000);
    t.clock.advance(60_000);
    await recorder.recordAll([first], recorder.failed("ARM said no", 60_000));
    expect(Date.parse((await stored()).outcome.retryAt!)).toBe(t.clock.now() + 60_000);
  });

  it("a target ARM does not find waits longer at each look", async () => {
    await recorder.recordNotFound([await stored()], "404 ResourceNotFound");
    const first = await stored();
    expect(first.outcome).toMatchObject({
      kind: "target-deleted",
      reason: expect.stringContaining("404 ResourceNotFound"),
    });
    const firstWait = Date.parse(first.outcome.retryAt!) - t.clock.now();
    t.clock.advance(firstWait);
    await recorder.recordNotFound([first], "404 ResourceNotFound");
    expect(Date.parse((await stored()).outcome.retryAt!) - t.clock.now()).toBe(2 * firstWait);
  });
});
