import { odata, type TableClient, type TransactionAction } from "@azure/data-tables";
import { parseTargetId } from "../core/resourceIds";
import { decodeKey } from "../core/tableKeys";
import { statusOf } from "./tableErrors";
import { transactionBatches } from "./tableBatches";
import { historyRowKey, targetPartition } from "./targets/rowKeys";

/**
 * What an app upgraded in place from the one-table layout (before issue 41) left in the shared table, swept by the
 * timer a bounded batch per run until none is left. Declarations need nothing: their rows kept their table, partition
 * and keys. The old history moves into its target's partition (it is what the status page shows of the past); the
 * rest was coordination and cache state the new layout keeps elsewhere or rebuilds, and is deleted: the old ETag
 * cache (partitions "%2F…"), "~leases", "~windows", "~debounce", "~attempts", "~writers", "~drift|…", and the old
 * problem rows (keyed by target, "%2F…", where the new ones are keyed by time).
 */

const OLD_SINGLE_PARTITIONS = ["~leases", "~windows", "~debounce", "~attempts", "~writers"] as const;
const OLD_HISTORY = "~history|";
const OLD_HISTORY_END = "~history}";
const OLD_DRIFT = "~drift|";
const OLD_DRIFT_END = "~drift}";
const OLD_MAX_TIME = 9_999_999_999_999;
/** Rows one run moves or deletes at most: a few seconds of Table work, however large the old store. */
export const OLD_LAYOUT_BATCH = 500;

const SWEEP_PARTITION = "~timer";
const SWEEP_ROW = "old-layout";

export interface OldLayoutSweep {
  /** Rows moved (history) and deleted this run; `done`: nothing of the old layout is left (not looked for again). */
  moved: number;
  deleted: number;
  done: boolean;
}

interface OldRow {
  partitionKey: string;
  rowKey: string;
  entry?: unknown;
}

/** The filter of every old row: a few partition ranges, and the old problem rows by their key. */
function oldRowsFilter(): string {
  const singles = OLD_SINGLE_PARTITIONS.map((p) => odata`PartitionKey eq ${p}`).join(" or ");
  return [
    odata`(PartitionKey ge ${"%"} and PartitionKey lt ${"&"})`,
    singles,
    odata`(PartitionKey ge ${OLD_HISTORY} and PartitionKey lt ${OLD_HISTORY_END})`,
    odata`(PartitionKey ge ${OLD_DRIFT} and PartitionKey lt ${OLD_DRIFT_END})`,
    odata`(PartitionKey eq ${"~problems"} and RowKey ge ${"%"} and RowKey lt ${"&"})`,
  ].join(" or ");
}

/** Where an old history row goes: its target's partition, the same time and random suffix in the new key. */
export function movedHistoryRow(row: OldRow): { partitionKey: string; rowKey: string; entry: string } | undefined {
  const target = parseTargetId(decodeKey(row.partitionKey.slice(OLD_HISTORY.length)));
  const time = Number(row.rowKey.slice(0, 13));
  const random = row.rowKey.slice(14, 22);
  if (!target.ok || !Number.isFinite(time) || typeof row.entry !== "string") return undefined;
  return {
    partitionKey: targetPartition(target.value),
    rowKey: historyRowKey(OLD_MAX_TIME - time, random),
    entry: row.entry.slice(0, 30_000),
  };
}

export class OldLayoutSweeper {
  /** Set once this process saw the sweep done (its row, or a query that found nothing). */
  private done = false;

  constructor(
    private readonly shared: TableClient,
    private readonly targets: TableClient,
    private readonly now: () => number,
  ) {}

  async sweep(): Promise<OldLayoutSweep> {
    if (this.done || (await this.markedDone())) {
      this.done = true;
      return { moved: 0, deleted: 0, done: true };
    }
    const rows = await this.oldRows();
    let moved = 0;
    for (const [pk, group] of byPartition(rows)) {
      if (pk.startsWith(OLD_HISTORY)) moved += await this.moveHistory(group);
      await this.deleteAll(pk, group);
    }
    const done = rows.length < OLD_LAYOUT_BATCH;
    if (done) {
      await this.shared.upsertEntity({ partitionKey: SWEEP_PARTITION, rowKey: SWEEP_ROW, sweptAt: this.now() });
      this.done = true;
    }
    return { moved, deleted: rows.length, done };
  }

  private async markedDone(): Promise<boolean> {
    try {
      await this.shared.getEntity(SWEEP_PARTITION, SWEEP_ROW);
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
  }

  private async oldRows(): Promise<OldRow[]> {
    const out: OldRow[] = [];
    const pages = this.shared
      .listEntities<Record<string, unknown>>({
        queryOptions: { filter: oldRowsFilter(), select: ["PartitionKey", "RowKey", "entry"] },
      })
      .byPage({ maxPageSize: OLD_LAYOUT_BATCH });
    try {
      for await (const page of pages) {
        for (const row of page) {
          out.push({ partitionKey: row.partitionKey ?? "", rowKey: row.rowKey ?? "", entry: row["entry"] });
          if (out.length === OLD_LAYOUT_BATCH) return out;
        }
      }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    return out;
  }

  /** Upserted, so a run cut short between the move and the delete moves the same rows again to the same keys. */
  private async moveHistory(rows: readonly OldRow[]): Promise<number> {
    const moves = rows.flatMap((r) => movedHistoryRow(r) ?? []);
    for (const [pk, group] of byPartition(moves))
      for (const batch of transactionBatches(group))
        await this.targets.submitTransaction(
          batch.map((e): TransactionAction => ["upsert", { ...e, partitionKey: pk }, "Replace"]),
        );
    return moves.length;
  }

  private async deleteAll(pk: string, rows: readonly OldRow[]): Promise<void> {
    for (const batch of transactionBatches(rows)) {
      try {
        await this.shared.submitTransaction(
          batch.map((r): TransactionAction => ["delete", { partitionKey: pk, rowKey: r.rowKey }]),
        );
      } catch (err) {
        // A row another host's sweep deleted first fails the whole batch: delete them one by one instead.
        if (statusOf(err) !== 404) throw err;
        for (const r of batch)
          await this.shared.deleteEntity(pk, r.rowKey).catch((e: unknown) => {
            if (statusOf(e) !== 404) throw e;
          });
      }
    }
  }
}

function byPartition<T extends { partitionKey: string }>(rows: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.partitionKey) ?? [];
    list.push(r);
    out.set(r.partitionKey, list);
  }
  return out;
}
