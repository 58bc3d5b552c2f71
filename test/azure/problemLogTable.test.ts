import type { TransactionAction } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { transactionBatches } from "../../src/azure/tableBatches";
import { PROBLEMS_KEPT, ProblemLogTable } from "../../src/azure/problemLogTable";
import type { ReconcileProblem } from "../../src/core/ports";
import { freshTable } from "../support/freshTable";
import { scaleSetRef } from "../support/refs";

const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000471/resourceGroups/rg/providers";
const ref = (i: number) => scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-${i}`);
const problem = (i: number, minute: number): ReconcileProblem => ({
  scaleSetId: ref(i).id,
  at: new Date(Date.parse("2026-12-02T10:00:00Z") + minute * 60_000).toISOString(),
  result: "failed",
  preconditionFailures: 1,
  throttles: 0,
  reason: `problem ${i}`,
});

describe("ProblemLogTable on Azurite", () => {
  it("lists the passes that ended badly, newest first", async () => {
    const log = new ProblemLogTable(await freshTable("problems"));
    await log.record(ref(1), problem(1, 0));
    await log.record(ref(2), problem(2, 5));
    await log.record(ref(3), problem(3, 2));
    expect((await log.list()).map((p) => p.reason)).toEqual(["problem 2", "problem 3", "problem 1"]);
  });

  it("keeps a row small: the reason cut, at most 20 instance failures", async () => {
    const log = new ProblemLogTable(await freshTable("problems"));
    const failures = Array.from({ length: 50 }, (_, i) => ({ instanceId: String(i), reason: "r".repeat(5_000) }));
    await log.record(ref(1), { ...problem(1, 0), reason: "x".repeat(5_000), instanceFailures: failures });
    const [read] = await log.list();
    expect(read?.reason).toHaveLength(1024);
    expect(read?.instanceFailures).toHaveLength(20);
    expect(read?.instanceFailures?.[0]?.reason).toHaveLength(1024);
  });

  it("trims all but the newest rows, and reads planted rows as nothing", async () => {
    const table = await freshTable("problems");
    const log = new ProblemLogTable(table);
    // Rows as record() keys them (newest first), written in transactions: 503 single writes would take seconds.
    const rows = Array.from({ length: PROBLEMS_KEPT + 3 }, (_, i) => ({
      partitionKey: "~problems",
      rowKey: `${9_000_000_000_000 - i}|x`,
      ...problem(i, i),
    }));
    for (const batch of transactionBatches(rows))
      await table.submitTransaction(batch.map((e): TransactionAction => ["create", e]));
    expect(await log.trim()).toBe(3);
    const kept = await log.list(PROBLEMS_KEPT + 10);
    expect(kept).toHaveLength(PROBLEMS_KEPT);
    expect(kept.at(-1)?.reason).toBe("problem 3");
    await table.upsertEntity({
      partitionKey: "~problems",
      rowKey: "0",
      scaleSetId: 7,
      at: "2026-12-03T00:00:00Z",
      result: "failed",
    });
    expect(await log.list(PROBLEMS_KEPT + 10)).toHaveLength(PROBLEMS_KEPT);
  });
});
