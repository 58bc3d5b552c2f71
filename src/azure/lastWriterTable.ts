import type { TableClient } from "@azure/data-tables";
import type { LastWriters, SeenWriter } from "../core/drift";
import type { EventCaller } from "../core/eventCaller";
import { encodeKey } from "../core/tableKeys";
import { statusOf } from "./tableErrors";

/**
 * The last foreign write seen on each resource (from the ARM event that invalidated its cache row), kept beside the
 * cache rows in the cache table's "~writers" partition: the cache row is re-stored by the reconcile's read before the
 * drift is found, so the writer cannot live on it. One blind upsert per foreign event; one point read per drift.
 */

const WRITERS_PARTITION = "~writers";

export class LastWriterTable implements LastWriters {
  constructor(
    readonly table: TableClient,
    private readonly now: () => number = Date.now,
  ) {}

  async record(resourceId: string, caller: EventCaller): Promise<void> {
    await this.table.upsertEntity(
      {
        partitionKey: WRITERS_PARTITION,
        rowKey: encodeKey(resourceId.toLowerCase()),
        caller: JSON.stringify(caller).slice(0, 16_000),
        seenAt: this.now(),
      },
      "Replace",
    );
  }

  async read(resourceId: string): Promise<SeenWriter | undefined> {
    try {
      const row = await this.table.getEntity<{ caller: string; seenAt: number }>(
        WRITERS_PARTITION,
        encodeKey(resourceId.toLowerCase()),
      );
      return { ...(JSON.parse(row.caller) as EventCaller), seenAt: Number(row.seenAt) };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }
}
