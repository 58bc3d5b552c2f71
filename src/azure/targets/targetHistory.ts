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
 * range query and the timer prunes a target with one keys-only query of its rows.
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

  /** One target's entries beyond the bound (the newest HISTORY_MAX_ENTRIES young enough stay); how many went. */
  async pruneTarget(partitionKey: string, now: number): Promise<number> {
    const cutoff = now - HISTORY_MAX_AGE_MS;
    const doomed: string[] = [];
    let kept = 0;
    for await (const row of this.store.table.listEntities({
      queryOptions: {
        filter: odata`PartitionKey eq ${partitionKey} and RowKey ge ${HISTORY_ROWS.from} and RowKey lt ${HISTORY_ROWS.to}`,
        select: ["RowKey"],
      },
    })) {
      const rk = row.rowKey ?? "";
      if (kept < HISTORY_MAX_ENTRIES && historyTimeOf(rk) >= cutoff) kept++;
      else doomed.push(rk);
    }
    for (const batch of transactionBatches(doomed))
      await this.store.table.submitTransaction(
        batch.map((rk): TransactionAction => ["delete", { partitionKey, rowKey: rk }]),
      );
    return doomed.length;
  }

  /** Every target's history beyond the bound: the partitions that hold any, one after another. */
  async prune(now: number): Promise<number> {
    const partitions = new Set<string>();
    for await (const row of this.store.table.listEntities({
      queryOptions: {
        filter: odata`RowKey ge ${HISTORY_ROWS.from} and RowKey lt ${HISTORY_ROWS.to}`,
        select: ["PartitionKey"],
      },
    }))
      partitions.add(row.partitionKey ?? "");
    let removed = 0;
    for (const pk of partitions) removed += await this.pruneTarget(pk, now);
    return removed;
  }
}
