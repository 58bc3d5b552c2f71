import { QueueClient } from "@azure/storage-queue";
import { TableClient } from "@azure/data-tables";
import { SpanStatusCode } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { targetStoreFromConfig } from "../../src/app/targetStoreFromConfig";
import { timerRun, type TimerRunDeps } from "../../src/app/timerRun";
import { CensusSummaryTable } from "../../src/azure/censusSummaryTable";
import { OldLayoutSweeper } from "../../src/azure/oldLayoutSweep";
import { ProblemLogTable } from "../../src/azure/problemLogTable";
import { ResourceOwnerTable } from "../../src/azure/resourceOwnerTable";
import { TargetCache } from "../../src/azure/targets/targetCache";
import { TargetHistoryTable } from "../../src/azure/targets/targetHistory";
import { StorageWorkQueue } from "../../src/azure/workQueue";
import type { StaleRunSummary } from "../../src/reconcile/reconcileStale";
import { azuriteConfig } from "../support/appConfig";
import { manualClock } from "../support/harness";
import { startInMemoryTelemetry, total } from "../support/otel";

const cs = testStorageConnectionString();
const table = (prefix: string) =>
  TableClient.fromConnectionString(cs, uniqueName(prefix), { allowInsecureConnection: true });
const clock = manualClock();
const config = azuriteConfig();
const store = targetStoreFromConfig(config, { clock, log: memoryLogger() });
const summaries = new CensusSummaryTable(table("timersum"));
const queueName = uniqueName("timer-");
let otel: ReturnType<typeof startInMemoryTelemetry>;

/** The timer's parts on Azurite; the old layout's shared table is never created, so its sweep fails every run. */
function deps(refresh: () => Promise<StaleRunSummary>, log = memoryLogger()): TimerRunDeps {
  return {
    refresh,
    readPacer: undefined,
    history: new TargetHistoryTable(store),
    oldLayout: new OldLayoutSweeper(table("oldnone"), store.table, clock.now),
    problems: new ProblemLogTable(table("timerprob")),
    cache: new TargetCache(store, new ResourceOwnerTable(table("timerown"))),
    censusSummary: summaries,
    queue: new StorageWorkQueue(new QueueClient(cs, queueName), new QueueClient(cs, `${queueName}-poison`)),
    clock,
    log,
    config,
  };
}

const SUMMARY = { visited: 3, refreshed: 1 } as StaleRunSummary;

beforeAll(async () => {
  otel = startInMemoryTelemetry();
  await Promise.all([store.table.createTable(), summaries.table.createTable()]);
});
afterAll(async () => {
  await Promise.all([store.table.deleteTable(), summaries.table.deleteTable()]);
  await otel.stop();
});

describe("the timer's run", () => {
  it("refreshes, then does its upkeep, each failing step logged without failing the run, all in one span", async () => {
    const log = memoryLogger();
    expect(await timerRun(deps(async () => SUMMARY, log))).toBe(SUMMARY);
    expect(log.lines.map((l) => l.event)).toEqual(
      expect.arrayContaining(["timer.old-layout-sweep-failed", "timer.problems-trim-failed"]),
    );
    expect((await summaries.read())?.at).toBe(clock.now());
    expect(total(await otel.points("poolsync.timer.runs"), { result: "success" })).toBe(1);
    expect(otel.spans().map((s) => s.name)).toContain("poolsync.timer");
  });

  it("fails when its refresh fails, skipping the upkeep, the span marked failed", async () => {
    const log = memoryLogger();
    await expect(timerRun(deps(() => Promise.reject(new Error("storage down")), log))).rejects.toThrow("storage down");
    expect(log.lines).toEqual([]);
    expect(total(await otel.points("poolsync.timer.runs"), { result: "failure" })).toBe(1);
    expect(otel.spans().at(-1)?.status).toEqual({ code: SpanStatusCode.ERROR, message: "storage down" });
  });
});
