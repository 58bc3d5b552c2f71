import type { TableClient, TransactionAction } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import { movedHistoryRow, OLD_LAYOUT_BATCH, OldLayoutSweeper } from "../../src/azure/oldLayoutSweep";
import { TargetHistoryTable } from "../../src/azure/targets/targetHistory";
import type { HistoryEntry } from "../../src/core/history";
import { encodeKey } from "../../src/core/tableKeys";
import { freshTable, targetStoreOn } from "../support/freshTable";

/**
 * The timer's sweep of what the one-table layout (before issue 41) left in the shared table, on Azurite: the old
 * history moves into its target's partition, where the status page reads it; the old coordination and cache rows go;
 * what the new layout keeps in the same table stays. A bounded batch a run, until a row says it is done.
 */

const NOW = Date.parse("2026-12-02T10:00:00Z");
const now = () => NOW;
const SCALE_SET =
  "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000046/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-old";
const OLD_HISTORY_PARTITION = `~history|${encodeKey(SCALE_SET)}`;

const failure = (at: number, reason: string): HistoryEntry => ({
  at: new Date(at).toISOString(),
  kind: "failure",
  result: "failed",
  reason,
});
/** An old history row: the time inverted in 13 digits, then the random suffix. */
const oldHistoryRow = (at: number, random: string, entry: unknown) => ({
  partitionKey: OLD_HISTORY_PARTITION,
  rowKey: `${String(9_999_999_999_999 - at).padStart(13, "0")}|${random}`,
  entry: typeof entry === "string" ? entry : JSON.stringify(entry),
});

async function insertAll(table: TableClient, rows: Array<{ partitionKey: string; rowKey: string }>): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    const batch = rows.slice(i, i + 100);
    await table.submitTransaction(batch.map((r): TransactionAction => ["create", r]));
  }
}

async function keysOf(table: TableClient): Promise<string[]> {
  const out: string[] = [];
  for await (const e of table.listEntities({ queryOptions: { select: ["PartitionKey", "RowKey"] } }))
    out.push(`${e.partitionKey} ${e.rowKey}`);
  return out.sort();
}

async function tables() {
  const [shared, targets] = await Promise.all([freshTable("oldshared"), freshTable("oldtargets")]);
  return { shared, targets, history: new TargetHistoryTable(targetStoreOn(targets, now, memoryLogger())) };
}

describe("the old one-table layout's sweep (Table Storage)", () => {
  it("moves the old history to its target, newest first, deletes the rest of the old layout and keeps the new", async () => {
    const { shared, targets, history } = await tables();
    const oldCache = `%2Fsubscriptions%2F00000000-aaaa-4bbb-8ccc-000000000046`;
    await shared.createEntity(oldHistoryRow(NOW - 60_000, "aaaaaaaa", failure(NOW - 60_000, "older")));
    await shared.createEntity(oldHistoryRow(NOW - 1_000, "bbbbbbbb", failure(NOW - 1_000, "newer")));
    await shared.createEntity({ partitionKey: `~history|not-a-target-id`, rowKey: "0000000000001|cccccccc" });
    for (const partitionKey of ["~leases", "~windows", "~debounce", "~attempts", "~writers", oldCache, "~drift|x"])
      await shared.createEntity({ partitionKey, rowKey: "r" });
    await shared.createEntity({ partitionKey: "~problems", rowKey: oldCache });
    const kept = ["~problems 0000001234567|p", "~budgets sub", "~owners o", "~census c"];
    for (const k of kept) {
      const [partitionKey, rowKey] = k.split(" ") as [string, string];
      await shared.createEntity({ partitionKey, rowKey });
    }

    const sweep = await new OldLayoutSweeper(shared, targets, now).sweep();

    expect(sweep).toEqual({ moved: 2, deleted: 11, done: true });
    const page = await history.page(SCALE_SET, 10);
    expect(page.entries.map((e) => (e.kind === "failure" ? e.reason : e.kind))).toEqual(["newer", "older"]);
    // What is left: the new layout's rows, and the row that says the sweep is done.
    expect(await keysOf(shared)).toEqual([...kept, "~timer old-layout"].sort());
  });

  it("sweeps a bounded batch a run, and once a run finds nothing more, no host looks again", async () => {
    const { shared, targets } = await tables();
    const extra = 7;
    await insertAll(
      shared,
      Array.from({ length: OLD_LAYOUT_BATCH + extra }, (_, i) => ({ partitionKey: "~windows", rowKey: `w${i}` })),
    );
    const sweeper = new OldLayoutSweeper(shared, targets, now);
    expect(await sweeper.sweep()).toEqual({ moved: 0, deleted: OLD_LAYOUT_BATCH, done: false });
    expect(await sweeper.sweep()).toEqual({ moved: 0, deleted: extra, done: true });

    // Another host, started after: the done row tells it so, and it queries nothing of the old layout.
    await shared.createEntity({ partitionKey: "~leases", rowKey: "written-since" });
    expect(await new OldLayoutSweeper(shared, targets, now).sweep()).toEqual({ moved: 0, deleted: 0, done: true });
    expect(await keysOf(shared)).toEqual(["~leases written-since", "~timer old-layout"]);
  });

  it("finishes a run whose rows another host's sweep deleted first", async () => {
    const { shared, targets, history } = await tables();
    const rows = [1, 2, 3].map((i) => oldHistoryRow(NOW - i * 1_000, `0000000${i}`, failure(NOW - i * 1_000, `e${i}`)));
    await insertAll(shared, rows);
    // The other host deletes one of them after this one read them and before it deletes them: between the move and
    // the delete.
    const racing = Object.create(targets) as TableClient;
    racing.submitTransaction = async (actions) => {
      await shared.deleteEntity(rows[1]!.partitionKey, rows[1]!.rowKey);
      return targets.submitTransaction(actions);
    };

    expect(await new OldLayoutSweeper(shared, racing, now).sweep()).toEqual({ moved: 3, deleted: 3, done: true });
    expect((await history.page(SCALE_SET, 10)).entries).toHaveLength(3);
    expect(await keysOf(shared)).toEqual(["~timer old-layout"]);
  });

  it("places an old history row by its target and time, and leaves one it cannot place", () => {
    const moved = movedHistoryRow(oldHistoryRow(NOW, "abcdef12", "{}"));
    expect(moved).toEqual({
      partitionKey: encodeKey(SCALE_SET.toLowerCase()),
      rowKey: expect.any(String),
      entry: "{}",
    });
    expect(moved?.rowKey).toBe(`h|${String(9_999_999_999_999 - NOW)}|abcdef12`);
    expect(movedHistoryRow({ partitionKey: "~history|nothing", rowKey: "0000000000001|abcdef12", entry: "{}" })).toBe(
      undefined,
    );
    expect(movedHistoryRow({ ...oldHistoryRow(NOW, "abcdef12", "{}"), entry: 42 })).toBe(undefined);
  });
});
