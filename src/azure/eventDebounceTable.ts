import type { TableClient } from "@azure/data-tables";
import type { EventDebounce } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { encodeKey } from "../core/tableKeys";
import { statusOf, unless404 } from "./tableErrors";

/**
 * The event debounce, one row per scale set in the cache table's "~debounce" partition. Apart from the scale set's
 * cache row on purpose: every event of a burst invalidates that row, so a claim conditional on its Table ETag lost
 * to the very events it was debouncing, and after a few conflicts nobody enqueued. Here only claimers write the row;
 * a conflict means another delivery claimed the window. Kept with the cache off: it is coordination, not a model.
 */

export const DEBOUNCE_PARTITION = "~debounce";
const MAX_TRIES = 5;

interface DebounceRow {
  partitionKey: string;
  rowKey: string;
  claimedAt: number;
}

export class EventDebounceTable implements EventDebounce {
  constructor(
    readonly table: TableClient,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(ref: TargetRef, windowMs: number): Promise<"claimed" | "within-window" | "contended"> {
    const rowKey = encodeKey(ref.key);
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const row = await this.table.getEntity<DebounceRow>(DEBOUNCE_PARTITION, rowKey).catch((err: unknown) => {
        if (statusOf(err) === 404) return undefined;
        throw err;
      });
      const now = this.now();
      if (row && now - Number(row.claimedAt ?? 0) < windowMs) return "within-window";
      try {
        if (!row) await this.table.createEntity({ partitionKey: DEBOUNCE_PARTITION, rowKey, claimedAt: now });
        else
          await this.table.updateEntity({ partitionKey: DEBOUNCE_PARTITION, rowKey, claimedAt: now }, "Merge", {
            etag: row.etag,
          });
        return "claimed";
      } catch (err) {
        if (statusOf(err) !== 409 && statusOf(err) !== 412) throw err;
        // Another delivery claimed (or renewed) the window meanwhile: look again.
      }
    }
    return "contended";
  }

  async forget(ref: TargetRef): Promise<void> {
    await unless404(() => this.table.deleteEntity(DEBOUNCE_PARTITION, encodeKey(ref.key)));
  }
}
