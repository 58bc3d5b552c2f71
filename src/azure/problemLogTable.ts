import { odata, type TableClient } from "@azure/data-tables";
import type { ProblemLog, ReconcileProblem, ScaleSetRows } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { cachePartition } from "./cacheKeys";
import { unless404 } from "./tableErrors";

/** One row per scale set: its last reconcile that met a 412, a throttle or a failure, for the status view. */
const PROBLEMS_PARTITION = "~problems";

/** The problem log, one row per scale set in the cache table's "~problems" partition. */
export class ProblemLogTable implements ProblemLog, ScaleSetRows {
  constructor(readonly table: TableClient) {}

  /** Kept even with the cache off: it is a record for people, not a cached model. */
  async record(ref: TargetRef, problem: ReconcileProblem): Promise<void> {
    await this.table.upsertEntity(
      {
        partitionKey: PROBLEMS_PARTITION,
        rowKey: cachePartition(ref),
        ...problem,
        reason: problem.reason.slice(0, 1024),
        // At most 20 instances, each reason cut: a row stays far below Table's 64 KiB property limit.
        instanceFailures: problem.instanceFailures
          ? JSON.stringify(
              problem.instanceFailures
                .slice(0, 20)
                .map((f) => ({ instanceId: f.instanceId.slice(0, 64), reason: f.reason.slice(0, 1024) })),
            )
          : undefined,
      },
      "Replace",
    );
  }

  async list(max = 200): Promise<ReconcileProblem[]> {
    const out: ReconcileProblem[] = [];
    const rows = this.table.listEntities<Omit<ReconcileProblem, "instanceFailures"> & { instanceFailures?: string }>({
      queryOptions: { filter: odata`PartitionKey eq ${PROBLEMS_PARTITION}` },
    });
    for await (const row of rows) {
      out.push({
        scaleSetId: row.scaleSetId,
        at: row.at,
        result: row.result,
        preconditionFailures: Number(row.preconditionFailures ?? 0),
        throttles: Number(row.throttles ?? 0),
        reason: row.reason ?? "",
        ...(row.instanceFailures ? { instanceFailures: parseInstanceFailures(row.instanceFailures) } : {}),
      });
      if (out.length >= max) break;
    }
    return out.sort((a, b) => b.at.localeCompare(a.at));
  }

  async forget(ref: TargetRef): Promise<void> {
    await unless404(() => this.table.deleteEntity(PROBLEMS_PARTITION, cachePartition(ref)));
  }
}

/** The stored list, read as untrusted: anything but {instanceId, reason} strings is left out. */
function parseInstanceFailures(text: string): { instanceId: string; reason: string }[] {
  try {
    const v: unknown = JSON.parse(text);
    if (!Array.isArray(v)) return [];
    return v
      .filter(
        (f): f is { instanceId: string; reason: string } =>
          typeof f?.instanceId === "string" && typeof f?.reason === "string",
      )
      .slice(0, 20)
      .map((f) => ({ instanceId: f.instanceId, reason: f.reason }));
  } catch {
    return [];
  }
}
