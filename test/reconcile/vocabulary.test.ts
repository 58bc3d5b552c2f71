import { describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import type { PassEvent } from "../../src/core/history";
import { CallStats } from "../../src/reconcile/callStats";
import {
  deferredReport,
  doubtHold,
  doubtHoldMs,
  DOUBT_REASON,
  mergeTriggers,
  observedSinceOf,
  reporter,
} from "../../src/reconcile/vocabulary";
import { manualClock } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/** The words a pass is told in and reports in: triggers joined, reports made and logged, doubts held (pure). */
const REF = scaleSetRef(
  "/subscriptions/00000000-0000-0000-0000-0000000000b2/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-words",
);

describe("mergeTriggers", () => {
  it("joins the reasons, keeps the highest attempt and the most careful reading", () => {
    expect(mergeTriggers({ reason: "event a", attempt: 1 }, { reason: "timer", attempt: 3, fresh: true })).toEqual({
      reason: "event a; timer",
      attempt: 3,
      fresh: true,
    });
    expect(mergeTriggers({ reason: "same", attempt: 0 }, { reason: "same", attempt: 0 }).reason).toBe("same");
    expect(
      mergeTriggers({ reason: "x".repeat(400), attempt: 0 }, { reason: "y".repeat(400), attempt: 0 }).reason,
    ).toHaveLength(512);
  });

  it("stays leading only when both were leading, claimed at the earlier time", () => {
    const lead = { reason: "declare", attempt: 0, leading: true, claimedAt: 200 };
    expect(mergeTriggers(lead, { ...lead, claimedAt: 100 })).toMatchObject({ leading: true, claimedAt: 100 });
    const joined = mergeTriggers(lead, { reason: "event", attempt: 0 });
    expect(joined.leading).toBeUndefined();
    expect(joined.claimedAt).toBeUndefined();
  });
});

describe("observedSinceOf", () => {
  it("a fresh pass trusts no cached row; otherwise rows read since its proof time", () => {
    expect(observedSinceOf({ reason: "r", attempt: 0, fresh: true, provenSince: 5 })).toBe(Number.POSITIVE_INFINITY);
    expect(observedSinceOf({ reason: "r", attempt: 0, provenSince: 5 })).toBe(5);
    expect(observedSinceOf({ reason: "r", attempt: 0 })).toBeUndefined();
  });
});

describe("reporter and deferredReport", () => {
  it("reports the pass's ARM calls and duration, logs it with scaleSetId, and tells history of a failed end", () => {
    const clock = manualClock();
    const log = memoryLogger();
    const stats = new CallStats();
    const events: PassEvent[] = [];
    const report = reporter(
      REF,
      { reason: "declare", attempt: 0, leading: true },
      stats,
      {
        clock,
        log,
        events: { emit: (e) => events.push(e) },
      },
      () => 2,
    );
    stats.reads = 4;
    stats.writes = 1;
    clock.advance(1_500);
    const r = report("failed", 3, { reason: "ARM said no" });
    expect(r).toMatchObject({
      targetId: REF.id,
      trigger: "leading: declare",
      result: "failed",
      declarations: 3,
      armReads: 4,
      armWrites: 1,
      instancesWritten: 2,
      durationMs: 1_500,
      reason: "ARM said no",
    });
    expect(log.lines).toEqual([expect.objectContaining({ event: "reconcile", scaleSetId: REF.id, result: "failed" })]);
    expect(events).toEqual([{ kind: "ended", result: "failed", reason: "ARM said no" }]);
    report("applied", 3);
    expect(events).toHaveLength(1);
  });

  it("a deferred pass reports no ARM call and its reason, logged like any report", () => {
    const log = memoryLogger();
    const r = deferredReport(REF, { reason: "event", attempt: 0 }, "another host holds the lease", 40, log);
    expect(r).toMatchObject({ result: "deferred", armReads: 0, armWrites: 0, durationMs: 40 });
    expect(log.lines[0]).toMatchObject({
      event: "reconcile",
      result: "deferred",
      reason: "another host holds the lease",
    });
  });
});

describe("doubtHoldMs and doubtHold", () => {
  it("holds a finish for the longest doubt over the resources read, and not at all without doubts", () => {
    const doubts = {
      record: () => {},
      remainingMs: (id: string, etag: string) => (id === "a" && etag === "1" ? 4_000 : id === "b" ? 9_000 : 0),
    };
    const read = [
      { id: "a", etag: "1" },
      { id: "b", etag: "7" },
      { id: "c", etag: "2" },
    ];
    expect(doubtHoldMs({ doubts }, read)).toBe(9_000);
    expect(doubtHoldMs({}, read)).toBe(0);
    expect(doubtHold(9_000)).toEqual({ cause: "wait", afterMs: 9_000, reason: DOUBT_REASON });
    expect(doubtHold(0)).toBeUndefined();
  });
});
