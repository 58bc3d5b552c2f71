import { odata, RestError, type TableClient, type TableEntityResult } from "@azure/data-tables";
import type { InstanceModel, NicModel, ScaleSetModel, VmModel } from "../core/models";
import type { CachedEntry, CachedPartition, CachedResourceRef, ModelCache, RefreshCandidate, TimerState } from "../core/ports";
import type { InstanceRef, ScaleSetRef, TargetRef } from "../core/resourceIds";
import { decodeKey, encodeKey } from "../core/tableKeys";
import { decodeModel, encodeModel, ModelTooLargeError } from "./modelCodec";

/**
 * The ETag cache: per scale set one partition, holding a row for the scale set model and one per instance.
 * Every store is conditional on the row's Table ETag as read before the ARM call, and every invalidation is
 * unconditional, so a refresh that read ARM before an invalidation can never overwrite it with older state.
 */

export const SCALE_SET_ROW = "vmss";
/** Encoded IDs start with "%2F", so this partition can never be a scale set's. */
const TIMER_PARTITION = "~timer";
/** One row per scale set: its last reconcile that met a 412, a throttle or a failure, for the status view. */
const PROBLEMS_PARTITION = "~problems";
/** One row per scale set: its declare window (src/azure/declareWindowTable.ts). */
export const WINDOWS_PARTITION = "~windows";

export interface ReconcileProblem {
  scaleSetId: string;
  at: string;
  result: string;
  preconditionFailures: number;
  throttles: number;
  reason: string;
}
const TIMER_ROW = "state";
export const instanceRow = (instanceId: string) => `vm-${instanceId}`;
/** NICs and top-level VMs: one row each in a partition of their own ID, so an event naming the resource finds it. */
const RESOURCE_ROW = { nic: "nic", vm: "vmres" } as const;
const isResourceRow = (rowKey: string) => rowKey === RESOURCE_ROW.nic || rowKey === RESOURCE_ROW.vm;

export interface CacheRow {
  partitionKey: string;
  rowKey: string;
  kind: "scaleSet" | "instance" | "nic" | "vm";
  resourceId: string;
  armEtag: string;
  model: string;
  modelChunks: number;
  readAt: number;
  stale: boolean;
  staleReason: string;
  staleAt: number;
  ourClientRequestId: string;
  pendingClientRequestId: string;
  /** Last time poolsync itself wrote or was asked about this scale set: the idle-eviction clock. */
  touchedAt: number;
  /** When an event last enqueued a reconcile for this scale set: the debounce window's start. */
  eventReconcileAt: number;
  [chunk: `model_${number}`]: Uint8Array;
}

const statusOf = (err: unknown) => (err instanceof RestError ? err.statusCode : (err as { statusCode?: number })?.statusCode);

export const cachePartition = (target: TargetRef | CachedResourceRef) => encodeKey(target.key);

function entryOf<M>(row: TableEntityResult<CacheRow>): CachedEntry<M> {
  let model: M | undefined;
  try {
    model = decodeModel<M>(row as unknown as Record<string, unknown>);
  } catch {
    model = undefined; // unreadable → a miss, re-read from ARM
  }
  return {
    model,
    readAt: Number(row.readAt ?? 0),
    stale: row.stale === true,
    staleReason: row.staleReason || undefined,
    ourClientRequestId: row.ourClientRequestId || undefined,
    pendingClientRequestId: row.pendingClientRequestId || undefined,
    rowEtag: row.etag,
  };
}

export class EtagCacheTable implements ModelCache {
  constructor(
    readonly table: TableClient,
    readonly enabled: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  async readPartition(scaleSet: TargetRef): Promise<CachedPartition> {
    const out: CachedPartition = { scaleSet: undefined, instances: new Map() };
    if (!this.enabled) return out;
    const rows = this.table.listEntities<CacheRow>({ queryOptions: { filter: odata`PartitionKey eq ${cachePartition(scaleSet)}` } });
    for await (const row of rows) {
      if (row.rowKey === SCALE_SET_ROW) out.scaleSet = entryOf<ScaleSetModel>(row);
      else if (row.rowKey.startsWith("vm-")) out.instances.set(row.rowKey.slice(3), entryOf<InstanceModel>(row));
    }
    return out;
  }

  storeScaleSet(ref: ScaleSetRef, model: ScaleSetModel, base: string | undefined, ourClientRequestId?: string): Promise<boolean> {
    return this.store(cachePartition(ref), SCALE_SET_ROW, "scaleSet", model.id, model.etag, model, base, ourClientRequestId);
  }

  storeInstance(ref: InstanceRef, model: InstanceModel, base: string | undefined, ourClientRequestId?: string): Promise<boolean> {
    return this.store(cachePartition(ref.scaleSet), instanceRow(ref.instanceId), "instance", model.id, model.etag, model, base, ourClientRequestId);
  }

  storeResource(ref: CachedResourceRef, model: NicModel | VmModel, base: string | undefined, ourClientRequestId?: string): Promise<boolean> {
    return this.store(cachePartition(ref), RESOURCE_ROW[ref.kind], ref.kind, model.id, model.etag, model, base, ourClientRequestId);
  }

  async evictResource(ref: CachedResourceRef): Promise<void> {
    if (!this.enabled) return;
    try {
      await this.table.deleteEntity(cachePartition(ref), RESOURCE_ROW[ref.kind]);
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
  }

  private async store(
    partitionKey: string,
    rowKey: string,
    kind: CacheRow["kind"],
    resourceId: string,
    armEtag: string,
    model: unknown,
    base: string | undefined,
    ourClientRequestId: string | undefined,
  ): Promise<boolean> {
    if (!this.enabled) return false;
    let encoded;
    try {
      encoded = encodeModel(model);
    } catch (err) {
      if (err instanceof ModelTooLargeError) {
        await this.markStaleRow(partitionKey, rowKey, `not cacheable: ${err.message}`);
        return false;
      }
      throw err;
    }
    const now = this.now();
    const entity = {
      partitionKey,
      rowKey,
      kind,
      resourceId,
      armEtag,
      ...encoded,
      readAt: now,
      stale: false,
      staleReason: "",
      staleAt: 0,
      // Kept across stores of other writers' state, so an event of our own last write is still recognised.
      ...(ourClientRequestId !== undefined ? { ourClientRequestId, pendingClientRequestId: "" } : {}),
      touchedAt: now,
    };
    try {
      if (base === undefined) await this.table.createEntity(entity);
      else await this.table.updateEntity(entity, "Merge", { etag: base });
      return true;
    } catch (err) {
      // 409: someone created the row since our read; 412: someone (an invalidation) changed it. Either way ours is older.
      if (statusOf(err) === 409 || statusOf(err) === 412 || statusOf(err) === 404) return false;
      throw err;
    }
  }

  async markStale(ref: ScaleSetRef | InstanceRef | CachedResourceRef, reason: string): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    const [pk, rk] = this.keysOf(ref);
    return this.markStaleRow(pk, rk, reason);
  }

  async beginWrite(ref: ScaleSetRef | InstanceRef | CachedResourceRef, clientRequestId: string): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    const [pk, rk] = this.keysOf(ref);
    const answer = await this.table.upsertEntity(
      { partitionKey: pk, rowKey: rk, stale: true, staleReason: "our write in flight", staleAt: this.now(), pendingClientRequestId: clientRequestId, touchedAt: this.now() },
      "Merge",
    );
    return answer.etag;
  }

  private async markStaleRow(partitionKey: string, rowKey: string, reason: string): Promise<string | undefined> {
    // Upsert, not update: a marker on a missing row makes a concurrent create-only store fail, as it must.
    const answer = await this.table.upsertEntity({ partitionKey, rowKey, stale: true, staleReason: reason.slice(0, 1024), staleAt: this.now() }, "Merge");
    return answer.etag;
  }

  private keysOf(ref: ScaleSetRef | InstanceRef | CachedResourceRef): [string, string] {
    if (ref.kind === "instance") return [cachePartition(ref.scaleSet), instanceRow(ref.instanceId)];
    return [cachePartition(ref), ref.kind === "scaleSet" ? SCALE_SET_ROW : RESOURCE_ROW[ref.kind]];
  }

  private async getRow(pk: string, rk: string): Promise<TableEntityResult<CacheRow> | undefined> {
    try {
      return await this.table.getEntity<CacheRow>(pk, rk);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async readEntry(ref: ScaleSetRef | InstanceRef | CachedResourceRef): Promise<CachedEntry<unknown> | undefined> {
    if (!this.enabled) return undefined;
    const row = await this.getRow(...this.keysOf(ref));
    return row ? entryOf<unknown>(row) : undefined;
  }

  async claimEventReconcile(ref: TargetRef, windowMs: number): Promise<boolean> {
    const [pk, rk] = this.keysOf(ref);
    // Even with the cache off the debounce row is kept: it is coordination, not a cached model.
    for (let attempt = 0; attempt < 5; attempt++) {
      const row = await this.getRow(pk, rk);
      const now = this.now();
      if (row && now - Number(row.eventReconcileAt ?? 0) < windowMs) return false;
      try {
        if (!row) await this.table.createEntity({ partitionKey: pk, rowKey: rk, stale: true, staleReason: "event", staleAt: now, eventReconcileAt: now });
        else await this.table.updateEntity({ partitionKey: pk, rowKey: rk, eventReconcileAt: now }, "Merge", { etag: row.etag });
        return true;
      } catch (err) {
        if (statusOf(err) !== 409 && statusOf(err) !== 412) throw err;
        // Someone changed the row (another delivery claiming, or an invalidation): look again.
      }
    }
    return false;
  }

  async listRefreshCandidates(readBefore: number): Promise<RefreshCandidate[]> {
    if (!this.enabled) return [];
    const out: RefreshCandidate[] = [];
    // Only the small columns: the models stay on the server.
    const rows = this.table.listEntities<CacheRow>({
      queryOptions: {
        // Scale set partitions start with the encoded "/": bookkeeping partitions ("~…") sort after them.
        filter: odata`PartitionKey lt '~' and (stale eq true or readAt lt ${readBefore})`,
        select: ["PartitionKey", "RowKey", "resourceId", "stale", "staleAt", "readAt", "touchedAt"],
      },
    });
    for await (const row of rows) {
      // NIC and VM rows are re-read by the reconcile of the target that declared them, not by the timer.
      if (isResourceRow(row.rowKey)) continue;
      const isInstance = row.rowKey.startsWith("vm-");
      const scaleSetId = row.resourceId ? (isInstance ? row.resourceId.replace(/\/virtualMachines\/[^/]+$/i, "") : row.resourceId) : decodeKey(row.partitionKey);
      out.push({
        scaleSetId,
        instanceId: isInstance ? row.rowKey.slice(3) : undefined,
        stale: row.stale === true,
        since: row.stale === true ? Number(row.staleAt ?? 0) : Number(row.readAt ?? 0),
        touchedAt: Number(row.touchedAt ?? row.readAt ?? 0),
        rowEtag: row.etag,
      });
    }
    return out;
  }

  async listCachedScaleSets(): Promise<Set<string>> {
    const out = new Set<string>();
    if (!this.enabled) return out;
    const rows = this.table.listEntities<CacheRow>({ queryOptions: { filter: odata`RowKey eq ${SCALE_SET_ROW} and armEtag ne ''`, select: ["PartitionKey"] } });
    for await (const row of rows) out.add(decodeKey(row.partitionKey));
    return out;
  }

  /** Kept even with the cache off: it is a record for people, not a cached model. */
  async recordProblem(ref: TargetRef, problem: ReconcileProblem): Promise<void> {
    await this.table.upsertEntity({ partitionKey: PROBLEMS_PARTITION, rowKey: cachePartition(ref), ...problem, reason: problem.reason.slice(0, 1024) }, "Replace");
  }

  async listProblems(max = 200): Promise<ReconcileProblem[]> {
    const out: ReconcileProblem[] = [];
    const rows = this.table.listEntities<ReconcileProblem>({ queryOptions: { filter: odata`PartitionKey eq ${PROBLEMS_PARTITION}` } });
    for await (const row of rows) {
      out.push({ scaleSetId: row.scaleSetId, at: row.at, result: row.result, preconditionFailures: Number(row.preconditionFailures ?? 0), throttles: Number(row.throttles ?? 0), reason: row.reason ?? "" });
      if (out.length >= max) break;
    }
    return out.sort((a, b) => b.at.localeCompare(a.at));
  }

  async readTimerState(): Promise<TimerState> {
    const row = await this.getRow(TIMER_PARTITION, TIMER_ROW);
    const r = row as unknown as { notBefore?: number; cursor?: string } | undefined;
    return { notBefore: Number(r?.notBefore ?? 0), cursor: r?.cursor ?? "" };
  }

  async writeTimerState(state: TimerState): Promise<void> {
    await this.table.upsertEntity({ partitionKey: TIMER_PARTITION, rowKey: TIMER_ROW, notBefore: state.notBefore, cursor: state.cursor }, "Replace");
  }

  async evictScaleSet(ref: TargetRef): Promise<void> {
    for (const partition of [PROBLEMS_PARTITION, WINDOWS_PARTITION]) {
      try {
        await this.table.deleteEntity(partition, cachePartition(ref));
      } catch (err) {
        if (statusOf(err) !== 404) throw err;
      }
    }
    if (!this.enabled) return;
    const rows = this.table.listEntities<CacheRow>({ queryOptions: { filter: odata`PartitionKey eq ${cachePartition(ref)}`, select: ["RowKey"] } });
    const keys: string[] = [];
    for await (const row of rows) keys.push(row.rowKey);
    // One partition: delete in transactions of at most 100, the batch limit.
    for (let i = 0; i < keys.length; i += 100) {
      await this.table.submitTransaction(keys.slice(i, i + 100).map((rk) => ["delete", { partitionKey: cachePartition(ref), rowKey: rk }]));
    }
  }

  async evictInstance(ref: InstanceRef): Promise<void> {
    if (!this.enabled) return;
    try {
      await this.table.deleteEntity(cachePartition(ref.scaleSet), instanceRow(ref.instanceId));
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
  }
}
