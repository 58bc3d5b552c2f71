import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { HISTORY_PRUNE_EVERY_MS, pruneHistory } from "../../src/app/pruneHistory";
import { targetStoreFromConfig } from "../../src/app/targetStoreFromConfig";
import { TargetHistoryTable } from "../../src/azure/targets/targetHistory";
import { HISTORY_MAX_AGE_MS } from "../../src/core/history";
import { azuriteConfig } from "../support/appConfig";
import { DEMO, manualClock } from "../support/harness";

// Early in the year: the timer's time below stays before any other test's clock, since pruneHistory keeps its last
// prune in the module, which later files of this worker share (a time ahead of theirs would hold off their prunes).
const clock = manualClock(Date.parse("2026-01-01T00:00:00Z"));
const config = azuriteConfig();
const store = targetStoreFromConfig(config, { clock, log: memoryLogger() });
const history = new TargetHistoryTable(store);
const failure = { kind: "failure" as const, result: "failed", reason: "throttled" };

beforeAll(async () => {
  await store.table.createTable();
});
afterAll(async () => {
  await store.table.deleteTable();
});

describe("the timer's history pruning", () => {
  it("removes the entries past the age bound from Table Storage, once per interval unless forced, logging how many", async () => {
    // The rows take their time from the store's clock; the timer prunes on its own, a bound and a day later.
    const timer = manualClock(clock.now() + HISTORY_MAX_AGE_MS + 86_400_000);
    const entry = { ...failure, at: new Date(clock.now()).toISOString() };
    await history.append(DEMO.scaleSetId, entry);
    const log = memoryLogger();
    expect(await pruneHistory(history, timer, log, true)).toBe(1);
    expect(log.lines).toEqual([{ level: "info", event: "history.pruned", removed: 1 }]);
    expect((await history.page(DEMO.scaleSetId, 10)).entries).toEqual([]);
    expect(await pruneHistory(history, timer, log, true)).toBe(0);
    expect(log.lines).toHaveLength(1); // nothing removed, nothing said

    await history.append(DEMO.scaleSetId, entry);
    timer.advance(HISTORY_PRUNE_EVERY_MS - 1);
    expect(await pruneHistory(history, timer, log)).toBe(0);
    expect((await history.page(DEMO.scaleSetId, 10)).entries).toHaveLength(1);
    timer.advance(1);
    expect(await pruneHistory(history, timer, log)).toBe(1);
  });

  it("logs a failed prune and returns 0: the timer's run goes on", async () => {
    const gone = new TargetHistoryTable(
      targetStoreFromConfig({ ...config, membershipsTable: uniqueName("none") }, { clock, log: memoryLogger() }),
    );
    const log = memoryLogger();
    expect(await pruneHistory(gone, clock, log, true)).toBe(0);
    expect(log.lines).toMatchObject([{ level: "warn", event: "history.prune-failed", error: expect.any(String) }]);
  });
});
