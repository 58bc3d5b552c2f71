import { odata, type TransactionAction } from "@azure/data-tables";
import { transactionBatches } from "../tableBatches";
import {
  HISTORY_MAX_AGE_MS,
  HISTORY_MAX_ENTRIES,
  type HistoryEntry,
  type HistoryPage,
  type TargetHistory,
} from "../../core/history";
import { parseTargetId } from "../../core/resourceIds";
import { statusOf } from "../tableErrors";
import { historyEntity } from "./historyRows";
import { HISTORY_ROWS, historyTimeOf, targetPartition } from "./rowKeys";
import type { TargetStore } from "./targetStore";

/**
 * Each target's history in its own partition (rows "h|<time inverted>|<random>", newest first), so a page is one
 * range query, and the timer prunes every target's by one keys-only scan of the table.
 */
export class TargetHistoryTable implements TargetHistory {
  constructor(private readonly store: TargetStore) {}

  private partitionOf(targetId: string): string | undefined {
    const ref = parseTargetId(targetId);
    return ref.ok ? targetPartition(ref.value) : undefined;
  }

  async append(targetId: string, entry: HistoryEntry): Promise<void> {
    await this.appendAll(targetId, [entry]);
  }

  async appendAll(targetId: string, entries: readonly HistoryEntry[]): Promise<void> {
    const pk = this.partitionOf(targetId);
    if (!pk) return;
    for (const batch of transactionBatches(entries))
      await this.store.commit(
        pk,
        batch.map((e) => ({ kind: "create" as const, entity: historyEntity(pk, e, this.store.now()) })),
      );
  }

  async page(targetId: string, limit: number, cursor?: string): Promise<HistoryPage> {
    const pk = this.partitionOf(targetId);
    if (!pk) return { entries: [] };
    const from = cursor && cursor.startsWith(HISTORY_ROWS.from) ? cursor : undefined;
    const filter = from
      ? odata`PartitionKey eq ${pk} and RowKey gt ${from} and RowKey lt ${HISTORY_ROWS.to}`
      : odata`PartitionKey eq ${pk} and RowKey ge ${HISTORY_ROWS.from} and RowKey lt ${HISTORY_ROWS.to}`;
    const entries: HistoryEntry[] = [];
    let last = "";
    try {
      const pages = this.store.table
        .listEntities<{ entry?: unknown }>({ queryOptions: { filter } })
        .byPage({ maxPageSize: limit + 1 });
      for await (const page of pages) {
        for (const row of page) {
          if (entries.length === limit) return { entries, next: last };
          try {
            if (typeof row.entry !== "string") continue;
            entries.push(JSON.parse(row.entry) as HistoryEntry);
          } catch {
            continue; // an unreadable entry is left out, never an error
          }
          last = row.rowKey ?? "";
        }
      }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    return { entries };
  }

  /**
   * Every target's history beyond the bound, by one keys-only scan of the table: a table query answers in
   * PartitionKey, then RowKey order, so each target's entries come newest first and a count per target is all it
   * takes to see which go (a query per target made the prune one request per target with any history). Deletes go
   * in transactions of one partition, as the scan passes them.
   */
  async prune(now: number): Promise<number> {
    const cutoff = now - HISTORY_MAX_AGE_MS;
    const kept = new Map<string, number>();
    const doomed = new Map<string, string[]>();
    let removed = 0;
    let current = "";
    const flush = async (partitionKey: string) => {
      const rowKeys = doomed.get(partitionKey) ?? [];
      doomed.delete(partitionKey);
      for (const batch of transactionBatches(rowKeys))
        await this.store.table.submitTransaction(
          batch.map((rk): TransactionAction => ["delete", { partitionKey, rowKey: rk }]),
        );
      removed += rowKeys.length;
    };
    for await (const row of this.store.table.listEntities({
      queryOptions: {
        filter: odata`RowKey ge ${HISTORY_ROWS.from} and RowKey lt ${HISTORY_ROWS.to}`,
        select: ["PartitionKey", "RowKey"],
      },
    })) {
      const pk = row.partitionKey ?? "";
      const rk = row.rowKey ?? "";
      // The scan has left the last partition: its deletes go now, so no more than one partition's wait in memory.
      if (pk !== current && doomed.has(current)) await flush(current);
      current = pk;
      const n = kept.get(pk) ?? 0;
      if (n < HISTORY_MAX_ENTRIES && historyTimeOf(rk) >= cutoff) kept.set(pk, n + 1);
      else {
        const rowKeys = doomed.get(pk) ?? [];
        rowKeys.push(rk);
        doomed.set(pk, rowKeys);
        // A transaction holds 100.
        if (rowKeys.length >= 100) await flush(pk);
      }
    }
    for (const pk of [...doomed.keys()]) await flush(pk);
    return removed;
  }
}
