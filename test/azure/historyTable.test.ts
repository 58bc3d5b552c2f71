import { TableClient } from "@azure/data-tables";
import { beforeEach, describe, expect, it } from "vitest";
import { HistoryTable } from "../../src/azure/historyTable";
import { HISTORY_MAX_AGE_MS, HISTORY_MAX_ENTRIES, type HistoryEntry } from "../../src/core/history";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/** Each target's history on Azurite: blind inserts, newest first, paged by cursor, bounded by the timer's prune. */

const VMSS =
  "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss";
const OTHER = VMSS.replace(/vmss$/, "other");
const T0 = Date.parse("2026-12-02T10:00:00Z");
const failure = (at: number, reason: string): HistoryEntry => ({
  at: new Date(at).toISOString(),
  kind: "failure",
  result: "failed",
  reason,
});

describe("HistoryTable", () => {
  let table: TableClient;
  let history: HistoryTable;
  beforeEach(async () => {
    table = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("hist"), {
      allowInsecureConnection: true,
    });
    await table.createTable();
    history = new HistoryTable(table, () => T0);
  });

  it("answers newest first, a page at a time, each page one query on the target's partition only", async () => {
    for (let i = 0; i < 5; i++) await history.append(VMSS, failure(T0 + i * 1000, `r${i}`));
    await history.append(OTHER, failure(T0, "other"));
    const first = await history.page(VMSS, 2);
    expect(first.entries.map((e) => (e as { reason: string }).reason)).toEqual(["r4", "r3"]);
    const second = await history.page(VMSS, 2, first.next);
    expect(second.entries.map((e) => (e as { reason: string }).reason)).toEqual(["r2", "r1"]);
    const last = await history.page(VMSS, 2, second.next);
    expect(last.entries.map((e) => (e as { reason: string }).reason)).toEqual(["r0"]);
    expect(last.next).toBeUndefined();
  });

  it("the prune keeps the newest 200 of each target and none older than 30 days", async () => {
    const now = T0 + HISTORY_MAX_AGE_MS + 60_000;
    const rows = Array.from({ length: HISTORY_MAX_ENTRIES + 5 }, (_, i) => failure(now - i * 1000, `n${i}`));
    for (let i = 0; i < rows.length; i += 50)
      await Promise.all(rows.slice(i, i + 50).map((e) => history.append(VMSS, e)));
    await history.append(OTHER, failure(T0, "a month and a minute old"));
    await history.append(OTHER, failure(now, "today"));

    expect(await history.prune(now)).toBe(5 + 1);
    const kept = await history.page(VMSS, HISTORY_MAX_ENTRIES);
    expect(kept.entries).toHaveLength(HISTORY_MAX_ENTRIES);
    expect((kept.entries.at(-1) as { reason: string }).reason).toBe(`n${HISTORY_MAX_ENTRIES - 1}`);
    expect((await history.page(OTHER, 10)).entries.map((e) => (e as { reason: string }).reason)).toEqual(["today"]);
  });
});
