import { afterEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";

const declare = (state: "present" | "absent", i: number) => ({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state, requestId: `toggle-${i}` });

/** 13 model writes in a row on one scale set: CRP's bucket holds 12. */
async function toggle13(h: Harness) {
  const reports = [];
  for (let i = 0; i < 13; i++) {
    await h.send(declare(i % 2 ? "absent" : "present", i));
    const [outcome] = await h.drain();
    if (outcome?.result === "reconciled") reports.push(outcome.report);
  }
  return reports;
}

describe("write pacing inside CRP's budget", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  it("defers the 13th quick write to one scale set instead of earning a 429", async () => {
    h = await startHarness({ sim: { throttling: true }, env: { POOLSYNC_GATHER_MILLISECONDS: "0" } });
    const reports = await toggle13(h);
    expect(h.sim.control.stats()).toMatchObject({ status429: 0 });
    expect(h.sim.control.stats(DEMO.scaleSetId).puts).toBe(12);
    expect(reports.at(-1)).toMatchObject({ result: "requeued", reason: expect.stringContaining("pacing: write budget") });
    expect(reports.at(-1)?.requeueAfterMs).toBeGreaterThan(10_000);
  });

  it("(control) without pacing the same sequence runs into CRP's 429", async () => {
    h = await startHarness({ sim: { throttling: true }, env: { POOLSYNC_GATHER_MILLISECONDS: "0", POOLSYNC_PACING_ENABLED: "false" } });
    await toggle13(h);
    expect(h.sim.control.stats().status429).toBeGreaterThan(0);
  });
});
