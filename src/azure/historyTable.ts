import { randomUUID } from "node:crypto";
import { odata, type TableClient, type TransactionAction } from "@azure/data-tables";
import {
  HISTORY_MAX_AGE_MS,
  HISTORY_MAX_ENTRIES,
  type HistoryEntry,
  type HistoryPage,
  type TargetHistory,
} from "../core/history";
import { encodeKey } from "../core/tableKeys";

/**
 * Each target's history in the cache table: one partition per target ("~history|<target>"), one entity per entry,
 * inserted blind (no read, no ETag). The RowKey is the time inverted, so a partition reads newest first and a page is
 * one query; the timer's prune reads only keys.
 */

const PREFIX = "~history|";
const MAX_TIME = 9_999_999_999_999;

const partitionOf = (targetId: string) => `${PREFIX}${encodeKey(targetId.toLowerCase())}`;
const rowKeyOf = (at: number) => `${String(MAX_TIME - at).padStart(13, "0")}-${randomUUID().slice(0, 8)}`;
const timeOf = (rowKey: string) => MAX_TIME - Number(rowKey.slice(0, 13));

export class HistoryTable implements TargetHistory {
  constructor(
    readonly table: TableClient,
    private readonly now: () => number = Date.now,
  ) {}

  async append(targetId: string, entry: HistoryEntry): Promise<void> {
    await this.table.createEntity(this.rowOf(targetId, entry));
  }

  /** One transaction per 100 entries: they share the target's partition (a pass's writes, recorded as it ends). */
  async appendAll(targetId: string, entries: readonly HistoryEntry[]): Promise<void> {
    if (entries.length === 1) return this.append(targetId, entries[0] as HistoryEntry);
    for (let i = 0; i < entries.length; i += 100) {
      const actions: TransactionAction[] = entries.slice(i, i + 100).map((e) => ["create", this.rowOf(targetId, e)]);
      await this.table.submitTransaction(actions);
    }
  }

  private rowOf(targetId: string, entry: HistoryEntry) {
    const at = Date.parse(entry.at);
    return {
      partitionKey: partitionOf(targetId),
      rowKey: rowKeyOf(Number.isNaN(at) ? this.now() : at),
      entry: JSON.stringify(entry).slice(0, 30_000),
    };
  }

  async page(targetId: string, limit: number, cursor?: string): Promise<HistoryPage> {
    const pk = partitionOf(targetId);
    const filter = cursor ? odata`PartitionKey eq ${pk} and RowKey gt ${cursor}` : odata`PartitionKey eq ${pk}`;
    const entries: HistoryEntry[] = [];
    let last = "";
    const pages = this.table
      .listEntities<{ entry: string }>({ queryOptions: { filter } })
      .byPage({ maxPageSize: limit + 1 });
    for await (const page of pages) {
      for (const row of page) {
        if (entries.length === limit) return { entries, next: last };
        try {
          entries.push(JSON.parse(row.entry) as HistoryEntry);
        } catch {
          continue; // an unreadable entry is left out, never an error
        }
        last = row.rowKey ?? "";
      }
    }
    return { entries };
  }

  async prune(now: number): Promise<number> {
    const cutoff = now - HISTORY_MAX_AGE_MS;
    const doomed = new Map<string, string[]>();
    const kept = new Map<string, number>();
    const rows = this.table.listEntities({
      queryOptions: {
        filter: odata`PartitionKey ge ${PREFIX} and PartitionKey lt ${"~history}"}`,
        select: ["PartitionKey", "RowKey"],
      },
    });
    // Newest first within each partition: the first HISTORY_MAX_ENTRIES young enough stay.
    for await (const row of rows) {
      const pk = row.partitionKey as string;
      const rk = row.rowKey as string;
      const n = kept.get(pk) ?? 0;
      if (n < HISTORY_MAX_ENTRIES && timeOf(rk) >= cutoff) kept.set(pk, n + 1);
      else doomed.set(pk, [...(doomed.get(pk) ?? []), rk]);
    }
    let removed = 0;
    for (const [pk, keys] of doomed) {
      for (let i = 0; i < keys.length; i += 100) {
        const batch: TransactionAction[] = keys
          .slice(i, i + 100)
          .map((rk) => ["delete", { partitionKey: pk, rowKey: rk }]);
        await this.table.submitTransaction(batch);
        removed += batch.length;
      }
    }
    return removed;
  }
}
