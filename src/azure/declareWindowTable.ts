import type { TableClient } from "@azure/data-tables";
import type { DeclareWindows, ScaleSetRows } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { cachePartition } from "./cacheKeys";
import { statusOf, unless404 } from "./tableErrors";

const WINDOWS_PARTITION = "~windows";

/**
 * The declare windows, one row per scale set in the cache table's "~windows" partition: apart from the scale
 * set's cache rows, so that opening a window never changes the Table ETag a running reconcile stores against.
 * Forgotten when the cache evicts the scale set.
 */
interface WindowRow {
  partitionKey: string;
  rowKey: string;
  openedAt: number;
  claimant: string;
}

export class DeclareWindowTable implements DeclareWindows, ScaleSetRows {
  constructor(
    readonly table: TableClient,
    private readonly now: () => number,
  ) {}

  async claim(ref: TargetRef, claimant: string, windowMs: number, joinableMs: number): Promise<"opened" | "joined"> {
    const rowKey = cachePartition(ref);
    for (let attempt = 0; attempt < 5; attempt++) {
      const row = await this.table.getEntity<WindowRow>(WINDOWS_PARTITION, rowKey).catch((err: unknown) => {
        if (statusOf(err) === 404) return undefined;
        throw err;
      });
      const now = this.now();
      // A redelivery of the message that opened the window: its enqueue may not have happened, so it goes again.
      if (row && row.claimant === claimant && now - Number(row.openedAt) < windowMs) return "opened";
      if (row && now - Number(row.openedAt) < joinableMs) return "joined";
      try {
        const entity = { partitionKey: WINDOWS_PARTITION, rowKey, openedAt: now, claimant };
        if (!row) await this.table.createEntity(entity);
        else await this.table.updateEntity(entity, "Replace", { etag: row.etag });
        return "opened";
      } catch (err) {
        if (statusOf(err) !== 409 && statusOf(err) !== 412) throw err;
        // Another declaration opened it between our read and our write: look again, it is probably ours to join.
      }
    }
    // Contended five times over: opening one more window costs one reconcile, never a lost declaration.
    return "opened";
  }

  async forget(ref: TargetRef): Promise<void> {
    await unless404(() => this.table.deleteEntity(WINDOWS_PARTITION, cachePartition(ref)));
  }
}
