import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { passProblems } from "../../src/app/passProblems";
import { targetStoreFromConfig } from "../../src/app/targetStoreFromConfig";
import { ProblemLogTable } from "../../src/azure/problemLogTable";
import type { ReconcileProblem } from "../../src/core/ports";
import { azuriteConfig } from "../support/appConfig";
import { DEMO, manualClock } from "../support/harness";
import { scaleSetRef } from "../support/refs";

const clock = manualClock();
const store = targetStoreFromConfig(azuriteConfig(), { clock, log: memoryLogger() });
const log = new ProblemLogTable(
  TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("problems"), {
    allowInsecureConnection: true,
  }),
);
const problems = passProblems(log, store);

const target = (name: string) => scaleSetRef(DEMO.scaleSetId.replace(/[^/]+$/, name));
const at = (minutesAgo: number) => clock.now() - minutesAgo * 60_000;
const problem = (id: string, minutesAgo: number, reason: string): ReconcileProblem => ({
  scaleSetId: id,
  at: new Date(at(minutesAgo)).toISOString(),
  result: "failed",
  preconditionFailures: 1,
  throttles: 0,
  reason,
});

/** A pass's problem as its commit keeps it in the target's control row. */
async function inControlRow(p: ReconcileProblem): Promise<void> {
  const lastProblem = {
    targetId: p.scaleSetId,
    at: Date.parse(p.at),
    result: p.result,
    reason: p.reason,
    preconditionFailures: 1,
    throttles: 0,
  };
  await store.updateControl(target(p.scaleSetId.split("/").pop()!), (s) => ({
    state: { ...s, lastProblem },
    result: undefined,
  }));
}

beforeAll(async () => {
  await Promise.all([store.table.createTable(), log.table.createTable()]);
});
afterAll(async () => {
  await Promise.all([store.table.deleteTable(), log.table.deleteTable()]);
});

describe("the problems of passes, for the status view", () => {
  it("merges each target's last problem with the shared log, newest first, a pass both hold once", async () => {
    const a = problem(target("a").id, 20, "a: 412 three times");
    await problems.record(target("a"), a);
    await inControlRow(a);
    await inControlRow(problem(target("b").id, 10, "b: throttled"));
    await problems.record(target("c"), problem(target("c").id, 30, "c: ARM refused"));
    const listed = await problems.list();
    expect(listed.map((p) => p.reason)).toEqual(["b: throttled", "a: 412 three times", "c: ARM refused"]);
    expect(listed[0]).toEqual(problem(target("b").id, 10, "b: throttled"));
    expect((await problems.list(2)).map((p) => p.reason)).toEqual(["b: throttled", "a: 412 three times"]);
  });
});
