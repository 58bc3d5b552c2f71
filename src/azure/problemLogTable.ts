import { odata, type TableClient } from "@azure/data-tables";
import type { ProblemLog, ReconcileProblem, ScaleSetRows } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { encodeKey } from "../core/tableKeys";
import { unless404 } from "./tableErrors";

/**
 * The problem log: passes that ended badly (failed, requeued by ARM's throttling or a conflict, instances refused),
 * newest first, in the shared table's "~problems" partition, one row per pass keyed by the time inverted. Written only
 * on those ends, never on the hot path (a pass's last problem of any kind is in its target's control row).
 */
const PROBLEMS_PARTITION = "~problems";
const MAX_TIME = 9_999_999_999_999;
/** Rows kept: the timer trims the rest. */
export const PROBLEMS_KEPT = 500;

const rowKeyOf = (at: number, ref: TargetRef) =>
  `${String(MAX_TIME - Math.min(Math.max(0, at), MAX_TIME)).padStart(13, "0")}|${encodeKey(ref.key)}`.slice(0, 1000);

export class ProblemLogTable implements ProblemLog, ScaleSetRows {
  constructor(readonly table: TableClient) {}

  /** Kept even with the cache off: it is a record for people, not a cached model. */
  async record(ref: TargetRef, problem: ReconcileProblem): Promise<void> {
    const at = Date.parse(problem.at);
    await this.table.upsertEntity(
      {
        partitionKey: PROBLEMS_PARTITION,
        rowKey: rowKeyOf(Number.isFinite(at) ? at : Date.now(), ref),
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
      if (typeof row.scaleSetId !== "string" || typeof row.at !== "string" || typeof row.result !== "string") continue;
      out.push({
        scaleSetId: row.scaleSetId,
        at: row.at,
        result: row.result,
        preconditionFailures: Number(row.preconditionFailures ?? 0),
        throttles: Number(row.throttles ?? 0),
        reason: typeof row.reason === "string" ? row.reason : "",
        ...(row.instanceFailures ? { instanceFailures: parseInstanceFailures(row.instanceFailures) } : {}),
      });
      if (out.length >= max) break;
    }
    return out.sort((a, b) => b.at.localeCompare(a.at));
  }

  /** Nothing per target to drop: old rows age out of the log. */
  async forget(_ref: TargetRef): Promise<void> {}

  /** Drops the rows past the newest PROBLEMS_KEPT (the timer's). */
  async trim(): Promise<number> {
    let seen = 0;
    let removed = 0;
    for await (const row of this.table.listEntities({
      queryOptions: { filter: odata`PartitionKey eq ${PROBLEMS_PARTITION}`, select: ["RowKey"] },
    })) {
      if (++seen <= PROBLEMS_KEPT) continue;
      await unless404(() => this.table.deleteEntity(PROBLEMS_PARTITION, row.rowKey ?? ""));
      removed++;
    }
    return removed;
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
