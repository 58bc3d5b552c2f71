import { describe, expect, it } from "vitest";
import { parseSchedule } from "../../local/host/ncrontab";
import { checkPastDue, MemoryScheduleMonitor } from "../../local/host/scheduleMonitor";
import { toHostTimerInfo } from "../../local/host/timerTrigger";

const at = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => new Date(y, mo - 1, d, h, mi, s);
const hourly = parseSchedule("0 0 * * * *");

describe("checkPastDue (the timer extension's ScheduleMonitor)", () => {
  it("first start: records the next occurrence, not past due", async () => {
    const m = new MemoryScheduleMonitor();
    const r = await checkPastDue(m, "t", at(2024, 1, 1, 10, 30), hourly, undefined);
    expect(r.pastDueMs).toBe(0);
    expect(await m.getStatus("t")).toEqual({
      last: undefined,
      next: at(2024, 1, 1, 11),
      lastUpdated: at(2024, 1, 1, 10, 30),
    });
  });

  it("a host that was down through an occurrence is past due by the time since it", async () => {
    const m = new MemoryScheduleMonitor();
    const last = at(2024, 1, 1, 10);
    const status = { last, next: at(2024, 1, 1, 11), lastUpdated: last };
    const r = await checkPastDue(m, "t", at(2024, 1, 1, 11, 20), hourly, status);
    expect(r.pastDueMs).toBe(20 * 60_000);
    expect(r.status).toEqual(status);
  });

  it("a changed schedule whose recomputed occurrence already passed restarts from now: not past due", async () => {
    const m = new MemoryScheduleMonitor();
    const last = at(2024, 1, 1, 10);
    // Stored under a daily schedule; now hourly: expected next 11:00 != stored next, and 11:00 is already past.
    const r = await checkPastDue(m, "t", at(2024, 1, 1, 12, 30), hourly, {
      last,
      next: at(2024, 1, 2, 10),
      lastUpdated: last,
    });
    expect(r.pastDueMs).toBe(0);
    expect(r.status).toEqual({ last: undefined, next: at(2024, 1, 1, 13), lastUpdated: at(2024, 1, 1, 12, 30) });
  });

  it("never ran (no last): judged from lastUpdated", async () => {
    const m = new MemoryScheduleMonitor();
    const updated = at(2024, 1, 1, 9, 15);
    const r = await checkPastDue(m, "t", at(2024, 1, 1, 10, 5), hourly, {
      last: undefined,
      next: at(2024, 1, 1, 10),
      lastUpdated: updated,
    });
    expect(r.pastDueMs).toBe(5 * 60_000);
  });
});

describe("the timer payload", () => {
  it("is the host's PascalCase TimerInfo, null status without a monitor", () => {
    expect(toHostTimerInfo(undefined, false)).toEqual({
      Schedule: { AdjustForDST: true },
      ScheduleStatus: null,
      IsPastDue: false,
    });
    const info = toHostTimerInfo({ last: undefined, next: at(2024, 1, 1, 11), lastUpdated: undefined }, true);
    expect(info.IsPastDue).toBe(true);
    expect(info.ScheduleStatus?.Last).toBe("0001-01-01T00:00:00");
    expect(info.ScheduleStatus?.Next).toMatch(/^2024-01-01T11:00:00[+-]\d\d:\d\d$/);
  });
});
