import { odata, type TableClient } from "@azure/data-tables";
import type { Drift, DriftStore } from "../core/drift";
import type { TargetRef } from "../core/resourceIds";
import { decodeKey, encodeKey } from "../core/tableKeys";
import { cachePartition } from "./cacheKeys";

/**
 * The most recent drift of each declaration, one row per (target, pool, ip configuration) in a "~drift|<target>"
 * partition of the cache table: the memberships view reads a target's drifts with one partition query.
 */

const partitionOf = (target: TargetRef) => `~drift|${cachePartition(target)}`;

export class DriftTable implements DriftStore {
  constructor(readonly table: TableClient) {}

  async record(target: TargetRef, declarationKey: string, drift: Drift): Promise<void> {
    await this.table.upsertEntity(
      { partitionKey: partitionOf(target), rowKey: encodeKey(declarationKey), drift: JSON.stringify(drift) },
      "Replace",
    );
  }

  async listForTarget(target: TargetRef): Promise<Map<string, Drift>> {
    const out = new Map<string, Drift>();
    const rows = this.table.listEntities<{ drift: string }>({
      queryOptions: { filter: odata`PartitionKey eq ${partitionOf(target)}` },
    });
    for await (const row of rows) {
      try {
        out.set(decodeKey(row.rowKey ?? ""), JSON.parse(row.drift) as Drift);
      } catch {
        // an unreadable row is no drift to show
      }
    }
    return out;
  }
}
