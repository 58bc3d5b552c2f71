import { odata } from "@azure/data-tables";
import type { Drift, DriftStore } from "../../core/drift";
import type { TargetRef } from "../../core/resourceIds";
import { decodeKey } from "../../core/tableKeys";
import { statusOf } from "../tableErrors";
import { DRIFT_ROWS, driftRowKey, targetPartition } from "./rowKeys";
import type { TargetStore } from "./targetStore";

/** Each declaration's last drift, a row of its target's partition ("d|<declaration key>"). */
export class TargetDriftTable implements DriftStore {
  constructor(private readonly store: TargetStore) {}

  async record(target: TargetRef, declarationKey: string, drift: Drift): Promise<void> {
    await this.store.commit(targetPartition(target), [
      {
        kind: "upsert",
        entity: { rowKey: driftRowKey(declarationKey), drift: JSON.stringify(drift).slice(0, 16_000) },
      },
    ]);
  }

  async listForTarget(target: TargetRef): Promise<Map<string, Drift>> {
    const out = new Map<string, Drift>();
    try {
      for await (const row of this.store.table.listEntities<{ drift?: unknown }>({
        queryOptions: {
          filter: odata`PartitionKey eq ${targetPartition(target)} and RowKey ge ${DRIFT_ROWS.from} and RowKey lt ${DRIFT_ROWS.to}`,
        },
      })) {
        try {
          if (typeof row.drift === "string")
            out.set(decodeKey((row.rowKey ?? "").slice(2)), JSON.parse(row.drift) as Drift);
        } catch {
          // an unreadable row is no drift to show
        }
      }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    return out;
  }
}
