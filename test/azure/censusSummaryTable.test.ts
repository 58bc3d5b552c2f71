import { describe, expect, it } from "vitest";
import { CensusSummaryTable } from "../../src/azure/censusSummaryTable";
import { freshTable } from "../support/freshTable";

describe("CensusSummaryTable on Azurite", () => {
  it("reads back the last census saved, with its time", async () => {
    const summary = new CensusSummaryTable(await freshTable("census"));
    await summary.save(1_000, { rows: 3 });
    await summary.save(2_000, { rows: 5, stale: 1 });
    expect(await summary.read()).toEqual({ at: 2_000, census: { rows: 5, stale: 1 } });
  });

  it("reads nothing before the first census, and nothing from a row that is not JSON", async () => {
    const table = await freshTable("census");
    const summary = new CensusSummaryTable(table);
    expect(await summary.read()).toBeUndefined();
    await table.upsertEntity({ partitionKey: "~census", rowKey: "cache", at: 1, census: "{torn" }, "Replace");
    expect(await summary.read()).toBeUndefined();
  });
});
