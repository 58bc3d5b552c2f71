import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";

/** A queue message as the host hands it: refused to the poison queue naming the field, or reconciled (sim + Azurite). */
describe("handleQueueMessage", () => {
  let h: Harness;
  let n = 0;
  const meta = (id = `m-${++n}`) => ({ id, dequeueCount: 1, insertionTime: new Date().toISOString() });
  const declare = (extra: Record<string, unknown> = {}) => ({
    v: 1,
    kind: "declare",
    scaleSetId: DEMO.scaleSetId,
    backendPoolId: DEMO.poolId,
    state: "present",
    ...extra,
  });
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it("poisons what is not a message, with the reason, on the poison queue", async () => {
    const out = await h.services.handleQueueMessage({ v: 1, kind: "declare" }, meta());
    expect(out).toMatchObject({
      result: "poisoned",
      reason: expect.stringMatching(/backendPoolId: .*state: is required/),
    });
    expect(await h.poisonMessages()).toContainEqual(
      expect.objectContaining({ reason: (out as { reason: string }).reason }),
    );
  });

  it("refuses a target outside POOLSYNC_SCOPES and a declaredAt far in the future, naming the field", async () => {
    const elsewhere = DEMO.scaleSetId.replace(DEMO.subscription, "00000000-0000-0000-0000-0000000000bc");
    expect(await h.services.handleQueueMessage(declare({ scaleSetId: elsewhere }), meta())).toEqual({
      result: "poisoned",
      reason: `scaleSetId: ${elsewhere} is outside POOLSYNC_SCOPES`,
    });
    const ahead = new Date(Date.now() + 3_600_000).toISOString();
    expect(await h.services.handleQueueMessage(declare({ declaredAt: ahead }), meta())).toMatchObject({
      result: "poisoned",
      reason: expect.stringMatching(/^declaredAt: .* in the future/),
    });
  });

  it("reconciles a quiet target's first declaration at once; the same message delivered again is skipped", async () => {
    const first = meta("m-dup");
    const body = declare({ requestId: "dup-1" });
    expect(await h.services.handleQueueMessage(body, first)).toMatchObject({
      result: "reconciled",
      report: { result: "applied" },
    });
    expect(await h.services.handleQueueMessage(body, { ...first, dequeueCount: 2 })).toEqual({
      result: "skipped",
      reason: "already applied (duplicate delivery)",
    });
  });

  it("a reconcile message runs the target's pass and answers its report", async () => {
    const out = await h.services.handleQueueMessage(
      { v: 1, kind: "reconcile", scaleSetId: DEMO.scaleSetId, reason: "timer: stale", attempt: 2 },
      meta(),
    );
    expect(out).toMatchObject({ result: "reconciled", report: { targetId: DEMO.scaleSetId } });
  });
});
