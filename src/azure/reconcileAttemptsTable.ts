import { odata, type TableClient } from "@azure/data-tables";
import type { ReconcileAttempt, ReconcileAttempts } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { encodeKey } from "../core/tableKeys";
import { statusOf, unless404 } from "./tableErrors";

/**
 * Where a scale set's chain of re-enqueued reconciles stands: one row per scale set in the cache table's "~attempts"
 * partition, written when a reconcile re-enqueues itself (throttled, conflict, transient) and removed when a
 * re-enqueued one ends. The timer reads it so that it neither starts a second chain beside a message that is only
 * invisible (a long Retry-After) nor, when that message was lost, restarts the count at zero: POOLSYNC_MAX_ATTEMPTS
 * then bounds the chain across timer runs too. Kept with the cache off: it is coordination, not a model.
 */

export const ATTEMPTS_PARTITION = "~attempts";

interface AttemptRow {
  partitionKey: string;
  rowKey: string;
  scaleSetId: string;
  attempt: number;
  nextAttemptAt: number;
  reason: string;
}

export class ReconcileAttemptsTable implements ReconcileAttempts {
  constructor(readonly table: TableClient) {}

  async record(ref: TargetRef, a: ReconcileAttempt): Promise<void> {
    await this.table.upsertEntity<AttemptRow>(
      {
        partitionKey: ATTEMPTS_PARTITION,
        rowKey: encodeKey(ref.key),
        scaleSetId: ref.id,
        attempt: a.attempt,
        nextAttemptAt: a.nextAttemptAt,
        reason: a.reason.slice(0, 1024),
      },
      "Replace",
    );
  }

  async clear(ref: TargetRef): Promise<void> {
    await unless404(() => this.table.deleteEntity(ATTEMPTS_PARTITION, encodeKey(ref.key)));
  }

  /** A scale set that is gone or evicted has no chain left to count. */
  forget(ref: TargetRef): Promise<void> {
    return this.clear(ref);
  }

  /** Every chain in progress, by scale set key: one partition query. */
  async list(): Promise<Map<string, ReconcileAttempt>> {
    const out = new Map<string, ReconcileAttempt>();
    try {
      for await (const row of this.table.listEntities<AttemptRow>({
        queryOptions: { filter: odata`PartitionKey eq ${ATTEMPTS_PARTITION}` },
      })) {
        out.set(row.scaleSetId.toLowerCase(), {
          attempt: Number(row.attempt ?? 0),
          nextAttemptAt: Number(row.nextAttemptAt ?? 0),
          reason: row.reason ?? "",
        });
      }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    return out;
  }
}
