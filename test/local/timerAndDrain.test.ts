import { describe, expect, it } from "vitest";
import { nextOccurrence, parseSchedule } from "../../local/host/ncrontab";
import { encodeMessageBody } from "../../local/host/queueMessage";
import { startLocalRuntime, type LocalRuntimeOptions } from "../../local/host/runtime";
import { TableScheduleMonitor } from "../../local/host/scheduleMonitor";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { APP_DIR, FIXTURE_GLOB, fixtureSettings, queueService, readRecords, waitFor } from "./support";

// Each test starts and stops its own runtime: settings go to process.env, so runtimes must not overlap.
const start = (settings: Record<string, string>, extra: Partial<LocalRuntimeOptions> = {}) =>
  startLocalRuntime({
    appDir: APP_DIR,
    entryGlob: FIXTURE_GLOB,
    settings,
    port: 0,
    log: () => undefined,
    print: false,
    timerStatus: "memory",
    ...extra,
  });

describe("timer trigger", () => {
  it("fires on its NCRONTAB schedule with the host's payload; sub-minute schedules are not monitored", async () => {
    const fx = fixtureSettings({ FIXTURE_SCHEDULE: "*/1 * * * * *" });
    const rt = await start(fx.settings);
    try {
      const got = await waitFor(
        () => readRecords(fx.file).filter((r) => r.fn === "fixtureTimer"),
        (r) => r.length >= 2,
        5000,
        "two ticks",
      );
      expect(got[0]?.input).toEqual({ isPastDue: false, schedule: { adjustForDST: true }, scheduleStatus: null });
      const times = got.map((r) => Date.parse(r.at as string));
      expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThan(500);
    } finally {
      await rt.stop();
    }
  });

  it("runOnStartup runs once at start, not past due, with the monitored status", async () => {
    const fx = fixtureSettings();
    const rt = await start(fx.settings);
    try {
      const [rec] = await waitFor(
        () => readRecords(fx.file).filter((r) => r.fn === "fixtureStartupTimer"),
        (r) => r.length === 1,
        5000,
        "the startup run",
      );
      expect(rec?.input).toMatchObject({ isPastDue: false, scheduleStatus: { last: "0001-01-01T00:00:00" } });
    } finally {
      await rt.stop();
    }
  });

  it("a missed occurrence recorded in storage runs at start with isPastDue: true, and the status moves on", async () => {
    const table = uniqueName("timers");
    const monitor = new TableScheduleMonitor(testStorageConnectionString(), table);
    const schedule = parseSchedule("0 0 * * * *");
    const now = new Date();
    const last = new Date(now.getFullYear(), now.getMonth(), now.getDate(), now.getHours() - 3);
    const missed = nextOccurrence(schedule, last) as Date;
    await monitor.updateStatus("fixtureTimer", { last, next: missed, lastUpdated: last });

    const fx = fixtureSettings({ FIXTURE_SCHEDULE: "0 0 * * * *" });
    const rt = await start(fx.settings, { timerStatus: "storage", timerStatusTable: table });
    try {
      const [rec] = await waitFor(
        () => readRecords(fx.file).filter((r) => r.fn === "fixtureTimer"),
        (r) => r.length === 1,
        5000,
        "the past-due run",
      );
      const input = rec?.input as { isPastDue: boolean; scheduleStatus: { last: string; next: string } };
      expect(input.isPastDue).toBe(true);
      expect(Date.parse(input.scheduleStatus.last)).toBe(last.getTime());
      expect(Date.parse(input.scheduleStatus.next)).toBe(missed.getTime());
      const after = await waitFor(
        () => monitor.getStatus("fixtureTimer"),
        (s) => !!s && s.next > now,
        5000,
        "the updated status",
      );
      expect(after?.next.getTime()).toBe(nextOccurrence(schedule, after?.last as Date)?.getTime());
    } finally {
      await rt.stop();
    }
  });
});

describe("stop()", () => {
  it("stops polling, lets the in-flight invocation finish and completes its message", async () => {
    const fx = fixtureSettings();
    const queue = queueService().getQueueClient(fx.queue);
    await queue.create();
    const rt = await start(fx.settings, { queues: { maxPollingIntervalMs: 200 } });
    await queue.sendMessage(encodeMessageBody(JSON.stringify({ sleepMs: 700 }), "base64"));
    await waitFor(
      () => readRecords(fx.file).filter((r) => r.fn === "fixtureQueue"),
      (r) => r.length === 1,
      10_000,
      "the invocation to start",
    );
    await rt.stop();
    expect(readRecords(fx.file).filter((r) => r.fn === "fixtureQueue" && r.phase === "done")).toHaveLength(1);
    const left = await queue.receiveMessages({ visibilityTimeout: 1 });
    expect(left.receivedMessageItems).toHaveLength(0);
    // And no server any more.
    await expect(fetch(`${rt.url}/api/fixtureHello`)).rejects.toThrow();
  });
});
