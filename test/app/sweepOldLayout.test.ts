import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { sweepOldLayout } from "../../src/app/sweepOldLayout";
import { OldLayoutSweeper } from "../../src/azure/oldLayoutSweep";

const table = (name: string) =>
  TableClient.fromConnectionString(testStorageConnectionString(), name, { allowInsecureConnection: true });
const shared = table(uniqueName("oldshared"));
const targets = table(uniqueName("oldtargets"));

beforeAll(async () => {
  await Promise.all([shared.createTable(), targets.createTable()]);
});
afterAll(async () => {
  await Promise.all([shared.deleteTable(), targets.deleteTable()]);
});

describe("the timer's sweep of the old one-table layout", () => {
  it("deletes what the old layout left, says so once, and says nothing when there is nothing left", async () => {
    await shared.createEntity({ partitionKey: "~leases", rowKey: "%2Fsubscriptions%2Fx" });
    await shared.createEntity({ partitionKey: "~windows", rowKey: "w" });
    const sweeper = new OldLayoutSweeper(shared, targets, () => Date.parse("2026-12-02T10:00:00Z"));
    const log = memoryLogger();
    await sweepOldLayout(sweeper, log);
    expect(log.lines).toEqual([{ level: "info", event: "timer.old-layout-swept", moved: 0, deleted: 2, done: true }]);
    await sweepOldLayout(sweeper, log);
    expect(log.lines).toHaveLength(1);
  });

  it("logs a failed sweep as a warning and lets the timer's run go on", async () => {
    const missing = table(uniqueName("oldnone"));
    const log = memoryLogger();
    await sweepOldLayout(new OldLayoutSweeper(missing, missing, () => 0), log);
    expect(log.lines).toMatchObject([
      { level: "warn", event: "timer.old-layout-sweep-failed", error: expect.any(String) },
    ]);
  });
});
