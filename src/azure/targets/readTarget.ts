import { odata, type TableClient } from "@azure/data-tables";
import type { ControlBounds, ControlState } from "../../core/control";
import { countsOf } from "../../core/declarationCap";
import type { StoredDeclaration } from "../../core/declarations";
import type { InstanceModel, NicModel, ScaleSetModel, VmModel } from "../../core/models";
import type { CachedEntry } from "../../core/ports";
import type { TargetRef } from "../../core/resourceIds";
import type { CacheRowMac } from "../cacheRowMac";
import { statusOf } from "../tableErrors";
import { decodeCacheRow, type UnreadableRow } from "./cacheRows";
import { controlOf } from "./controlRow";
import { decodeDeclaration } from "./declarationRows";
import { CONTROL_ROW, MODEL_ROW, PASS_ROWS_BEFORE, targetPartition } from "./rowKeys";

/** Everything one query of a target's partition gives a pass: control, declarations, cache rows. */
export interface TargetSnapshot {
  ref: TargetRef;
  partitionKey: string;
  control: ControlState;
  /** The control row's Table ETag; undefined when there is none yet (the first write creates it). */
  controlEtag: string | undefined;
  /** Live declarations (removal marks left out). */
  declarations: StoredDeclaration[];
  /** Declarations the timer removed (finished absents), by row key: they still outrank older ones of their key. */
  removed: Map<string, StoredDeclaration & { removedAt: string }>;
  model: CachedEntry<ScaleSetModel> | undefined;
  instances: Map<string, CachedEntry<InstanceModel>>;
  /** NIC and VM rows by row key. */
  nics: Map<string, CachedEntry<NicModel>>;
  vms: Map<string, CachedEntry<VmModel>>;
  /** Rows that did not decode or held values out of bounds, each with why (they were left out or rebuilt). */
  problems: Array<{ rowKey: string; reason: string }>;
}

export interface ReadContext {
  now: () => number;
  bounds: ControlBounds;
  mac: CacheRowMac;
  /** With the cache off, cache rows are not read (a pass reads ARM). */
  cacheEnabled: boolean;
}

const NO_TABLE = new Set([404]);

/** One query: the control row, the declarations and the cache rows of a target (`RowKey lt "d"`). */
export async function readTarget(table: TableClient, ref: TargetRef, ctx: ReadContext): Promise<TargetSnapshot> {
  const partitionKey = targetPartition(ref);
  const now = ctx.now();
  const problems: TargetSnapshot["problems"] = [];
  const unreadable: UnreadableRow = (row, reason) => problems.push({ rowKey: row.rowKey, reason });
  const declarations: StoredDeclaration[] = [];
  const removed: TargetSnapshot["removed"] = new Map();
  const instances = new Map<string, CachedEntry<InstanceModel>>();
  const nics = new Map<string, CachedEntry<NicModel>>();
  const vms = new Map<string, CachedEntry<VmModel>>();
  let model: CachedEntry<ScaleSetModel> | undefined;
  let controlRow: (Record<string, unknown> & { etag: string }) | undefined;
  try {
    const rows = table.listEntities<Record<string, unknown>>({
      queryOptions: { filter: odata`PartitionKey eq ${partitionKey} and RowKey lt ${PASS_ROWS_BEFORE}` },
    });
    for await (const row of rows) {
      const rowKey = row.rowKey ?? "";
      if (rowKey === CONTROL_ROW) controlRow = row as typeof row & { etag: string };
      else if (rowKey.startsWith("%")) {
        const d = decodeDeclaration(row, now);
        if (!d.ok) problems.push({ rowKey, reason: d.reason });
        else if (d.removedAt) removed.set(rowKey, { ...d.declaration, removedAt: d.removedAt });
        else declarations.push(d.declaration);
      } else if (ctx.cacheEnabled && rowKey.startsWith("c|")) {
        const entry = decodeCacheRow<unknown>(row as typeof row & { etag: string }, ctx.mac, now, unreadable);
        if (rowKey === MODEL_ROW) model = entry as CachedEntry<ScaleSetModel>;
        else if (rowKey.startsWith("c|i|")) instances.set(rowKey.slice(4), entry as CachedEntry<InstanceModel>);
        else if (rowKey.startsWith("c|n|")) nics.set(rowKey, entry as CachedEntry<NicModel>);
        else if (rowKey.startsWith("c|v|")) vms.set(rowKey, entry as CachedEntry<VmModel>);
      }
    }
  } catch (err) {
    // No table yet (a fresh account before ready()): an empty target.
    if (!NO_TABLE.has(statusOf(err) ?? 0)) throw err;
  }
  const control = controlOf(controlRow, now, ctx.bounds, () =>
    countsOf(declarations.map((d) => ({ state: d.state, callerId: d.declaredBy.id }))),
  );
  for (const reason of control.problems) problems.push({ rowKey: CONTROL_ROW, reason });
  return {
    ref,
    partitionKey,
    control: control.state,
    controlEtag: controlRow?.etag,
    declarations,
    removed,
    model,
    instances,
    nics,
    vms,
    problems,
  };
}
