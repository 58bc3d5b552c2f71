import { beforeEach, describe, expect, it } from "vitest";
import type { StoredDeclaration } from "../../src/core/declarations";
import { BeingDeletedError, FatalError, NotFoundError, ThrottledError } from "../../src/core/errors";
import { CallStats } from "../../src/reconcile/callStats";
import { settleStop, type PassStop } from "../../src/reconcile/passStop";
import { OutcomeRecorder } from "../../src/reconcile/recordOutcomes";
import { reporter } from "../../src/reconcile/vocabulary";
import { bareModel, scaleSetRef } from "../support/refs";
import { targetTableOnAzurite } from "../support/targetTable";

/** What a pass that stopped early tells its declarations (rows on Azurite) and the queue (its report). */
const SUB = "00000000-0000-0000-0000-0000000000b7";
const REF = scaleSetRef(
  `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-stop`,
);
const pool = (name: string) =>
  `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/${name}`;
const MAX_ATTEMPTS = 3;

describe("settleStop", () => {
  let t: Awaited<ReturnType<typeof targetTableOnAzurite>>;
  let active: StoredDeclaration[];
  let outcomes: OutcomeRecorder;

  beforeEach(async () => {
    t = await targetTableOnAzurite("stop");
    outcomes = new OutcomeRecorder(REF, t.declarations, t.clock);
    const listed = await t.declare(REF, [{ backendPoolId: pool("a") }, { backendPoolId: pool("b") }]);
    // pool a was applied by an earlier pass; pool b is what this pass was writing.
    await outcomes.record(t.byPool(listed, pool("a")), { kind: "applied", appliedEtag: "W/1" });
    active = await t.declarations.listForTarget(REF);
  });

  const settle = (stop: PassStop, attempt = 0, spare?: (d: StoredDeclaration) => boolean) =>
    settleStop(
      stop,
      {
        target: REF,
        trigger: { reason: "test", attempt },
        active,
        declarations: active.length,
        outcomes,
        report: reporter(REF, { reason: "test", attempt }, new CallStats(), t, () => 0),
        ...(spare ? { spare } : {}),
      },
      { cache: t.cache, log: t.log, config: { maxAttempts: MAX_ATTEMPTS, failedRetryMs: 60_000 } },
    );
  const outcomeOf = async (name: string) => t.byPool(await t.declarations.listForTarget(REF), pool(name)).outcome;

  it("ARM's 404 marks every declaration target-deleted and drops the target's cached model", async () => {
    await t.cache.storeScaleSet(REF, bareModel(REF.id), undefined);
    expect((await t.cache.readEntry(REF))?.model).toBeDefined();
    const r = await settle({ error: new NotFoundError("scale set not found", 404) });
    expect(r).toMatchObject({ result: "target-deleted", reason: "scale set not found" });
    expect(await outcomeOf("a")).toMatchObject({ kind: "target-deleted" });
    expect(await outcomeOf("b")).toMatchObject({ kind: "target-deleted" });
    expect((await t.cache.readEntry(REF))?.model).toBeUndefined();
  });

  it("a scale set being deleted says so on every declaration", async () => {
    const r = await settle({ error: new BeingDeletedError("provisioningState Deleting") });
    expect(r.result).toBe("target-deleting");
    expect(await outcomeOf("b")).toMatchObject({ kind: "target-deleting", reason: "provisioningState Deleting" });
  });

  it("a throttle comes back on the queue after Retry-After, touching no declaration", async () => {
    const r = await settle({ error: new ThrottledError("too many requests", 17_000) });
    expect(r).toMatchObject({ result: "requeued", requeueAfterMs: 17_000 });
    expect(await outcomeOf("b")).toMatchObject({ kind: "pending" });
  });

  it("past POOLSYNC_MAX_ATTEMPTS it gives up: what this pass was writing fails with the count, the spared stays", async () => {
    // As reconcileScaleSet spares them: what was applied before this pass.
    const applied = (d: StoredDeclaration) => d.outcome.kind === "applied";
    const r = await settle({ error: new ThrottledError("too many requests", 17_000) }, MAX_ATTEMPTS, applied);
    expect(r).toMatchObject({ result: "failed", reason: expect.stringContaining(`after ${MAX_ATTEMPTS}`) });
    expect(await outcomeOf("b")).toMatchObject({ kind: "failed", reason: r.reason });
    expect(await outcomeOf("a")).toMatchObject({ kind: "applied" });
  });

  it("a terminal answer fails what was not applied with ARM's reason, for the timer's retry, and logs it", async () => {
    const r = await settle({ error: new FatalError("LinkedAuthorizationFailed on the pool", 403) });
    expect(r).toMatchObject({ result: "failed", reason: expect.stringContaining("LinkedAuthorizationFailed") });
    const b = await outcomeOf("b");
    expect(b).toMatchObject({ kind: "failed", reason: r.reason });
    expect(Date.parse(b.retryAt!)).toBe(t.clock.now() + 60_000);
    expect(await outcomeOf("a")).toMatchObject({ kind: "applied" });
    expect(t.log.lines.some((l) => l.event === "reconcile.error" && l.targetId === REF.id)).toBe(true);
  });
});
