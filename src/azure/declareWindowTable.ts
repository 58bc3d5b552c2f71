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
  /** A leading reconcile reads at once: nothing joins it. */
  leading?: boolean;
  /** A pass of the scale set began reading its declarations after this: nothing joins the window any more. */
  closed?: boolean;
}

export class DeclareWindowTable implements DeclareWindows, ScaleSetRows {
  constructor(
    readonly table: TableClient,
    private readonly now: () => number,
  ) {}

  async claim(
    ref: TargetRef,
    claimant: string,
    { windowMs, joinableMs, quietMs }: { windowMs: number; joinableMs: number; quietMs: number },
  ): Promise<"leading" | "opened" | "joined"> {
    const rowKey = cachePartition(ref);
    for (let attempt = 0; attempt < 5; attempt++) {
      const row = await this.table.getEntity<WindowRow>(WINDOWS_PARTITION, rowKey).catch((err: unknown) => {
        if (statusOf(err) === 404) return undefined;
        throw err;
      });
      const now = this.now();
      const age = row ? now - Number(row.openedAt) : Number.POSITIVE_INFINITY;
      // A redelivery of the message that claimed: its reconcile may not have happened, so it goes again.
      if (
        row &&
        row.claimant === claimant &&
        age < (row.leading === true ? windowMs : joinableMs) &&
        row.closed !== true
      )
        return row.leading === true ? "leading" : "opened";
      // Open until a pass closes it, however long the queue's backlog keeps its reconcile waiting: the pass closes
      // before it reads, so whoever stored a declaration and then found the window open is read by that pass.
      if (row && row.leading !== true && row.closed !== true && age < joinableMs) return "joined";
      // An infinite quiet time (the caller is in a burst) never leads, not even on a scale set without a row.
      const leading = quietMs !== Number.POSITIVE_INFINITY && age >= quietMs;
      try {
        const entity = { partitionKey: WINDOWS_PARTITION, rowKey, openedAt: now, claimant, leading };
        if (!row) await this.table.createEntity(entity);
        else await this.table.updateEntity(entity, "Replace", { etag: row.etag });
        return leading ? "leading" : "opened";
      } catch (err) {
        if (statusOf(err) !== 409 && statusOf(err) !== 412) throw err;
        // Another declaration claimed between our read and our write: look again, it is probably ours to join.
      }
    }
    // Contended five times over: opening one more window costs one reconcile, never a lost declaration.
    return "opened";
  }

  async windowPending(ref: TargetRef, windowMs: number): Promise<boolean> {
    const row = await this.table.getEntity<WindowRow>(WINDOWS_PARTITION, cachePartition(ref)).catch((err: unknown) => {
      if (statusOf(err) === 404) return undefined;
      throw err;
    });
    return (
      row !== undefined && row.leading !== true && row.closed !== true && this.now() - Number(row.openedAt) < windowMs
    );
  }

  async close(ref: TargetRef): Promise<void> {
    // Unconditional: closing a window opened after our read only makes its joiners' declarations read by this pass.
    await unless404(() =>
      this.table.updateEntity({ partitionKey: WINDOWS_PARTITION, rowKey: cachePartition(ref), closed: true }, "Merge"),
    );
  }

  async forget(ref: TargetRef): Promise<void> {
    await unless404(() => this.table.deleteEntity(WINDOWS_PARTITION, cachePartition(ref)));
  }
}
