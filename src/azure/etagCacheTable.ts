import { odata, type TableClient, type TableEntityResult } from "@azure/data-tables";
import type { InstanceModel, NicModel, ScaleSetModel, VmModel } from "../core/models";
import type {
  CachedEntry,
  CachedPartition,
  CachedResourceRef,
  CachedVmNics,
  GroupRow,
  ModelCache,
  RefreshCandidate,
  ResourceGroupScope,
  ScaleSetRows,
  VmNicRows,
} from "../core/ports";
import { parseNicId, sameResource, type InstanceRef, type ScaleSetRef, type TargetRef } from "../core/resourceIds";
import { decodeKey } from "../core/tableKeys";
import { CacheRowMac, MAC_COLUMN, type MacFields } from "./cacheRowMac";
import {
  cachePartition,
  cacheRowKeys,
  groupScaleSetPartitions,
  groupVmPartitions,
  instanceRow,
  isResourceRow,
  RESOURCE_ROW,
  SCALE_SET_ROW,
} from "./cacheKeys";
import { decodeModel, encodeModel, MAX_CHUNKS, ModelTooLargeError } from "./modelCodec";
import { PartitionBatcher } from "./partitionBatcher";
import { statusOf, unless404 } from "./tableErrors";

/**
 * The ETag cache: per scale set one partition, holding a row for the scale set model and one per instance; NICs and
 * top-level VMs one row each, in a partition of their own ID.
 * Every store is conditional on the row's Table ETag as read before the ARM call, and every invalidation is
 * unconditional, so a refresh that read ARM before an invalidation can never overwrite it with older state.
 * Other stores keep rows of their own in the same table ("~…" partitions); they own them, and are asked to
 * drop them when a scale set is evicted.
 */

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
  /** Instance rows: the scale set ETag read before this instance was ("" when none vouches for it). */
  listedUnder: string;
  /** HMAC of what a write may be built from (cacheRowMac.ts); a row without a valid one is a miss. */
  mac: string;
  [chunk: `model_${number}`]: Uint8Array;
}

/** What the MAC covers, as a row holds it (the chunks bounded, so a planted count costs nothing). */
function macFieldsOf(row: Record<string, unknown>): MacFields {
  const count = Math.min(Math.max(0, Math.trunc(Number(row.modelChunks ?? 0)) || 0), MAX_CHUNKS);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const c = row[`model_${i}`];
    if (c instanceof Uint8Array) chunks.push(c);
  }
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    partitionKey: text(row.partitionKey),
    rowKey: text(row.rowKey),
    resourceId: text(row.resourceId),
    armEtag: text(row.armEtag),
    listedUnder: text(row.listedUnder),
    model: text(row.model),
    chunks,
  };
}

/** Told of a row whose model cannot be read (it is then a miss, re-read from ARM): worth a look, never an error. */
export type UnreadableRow = (row: { partitionKey: string; rowKey: string; resourceId: string }, reason: string) => void;

function entryOf<M>(row: TableEntityResult<CacheRow>, mac: CacheRowMac, unreadable?: UnreadableRow): CachedEntry<M> {
  let model: M | undefined;
  let problem: string | undefined;
  const hasModel = Number(row.modelChunks ?? 0) > 0 || (typeof row.model === "string" && row.model !== "");
  // Storage content is input: a body poolsync did not store (or another key stored) is never a write's base.
  const authentic = hasModel && mac.verify(macFieldsOf(row as unknown as Record<string, unknown>), row.mac);
  try {
    if (hasModel && !authentic) throw new Error("its MAC does not verify (not stored by this app, or changed since)");
    model = decodeModel<M>(row as unknown as Record<string, unknown>);
    if (
      model === undefined &&
      (Number(row.modelChunks ?? 0) > 0 || (typeof row.model === "string" && row.model !== ""))
    )
      problem = "a chunk of the model is missing";
  } catch (err) {
    model = undefined; // unreadable → a miss, re-read from ARM
    problem = err instanceof Error ? err.message : String(err);
  }
  if (problem !== undefined)
    unreadable?.({ partitionKey: row.partitionKey, rowKey: row.rowKey, resourceId: row.resourceId ?? "" }, problem);
  return {
    model,
    readAt: Number(row.readAt ?? 0),
    stale: row.stale === true,
    staleReason: row.staleReason || undefined,
    ourClientRequestId: row.ourClientRequestId || undefined,
    pendingClientRequestId: row.pendingClientRequestId || undefined,
    rowEtag: row.etag,
    ...(row.listedUnder && authentic ? { listedUnder: row.listedUnder } : {}),
  };
}

/** Scale set partitions start with the encoded "/"; this range holds them and none of the "~…" partitions. */
const SCALE_SET_PARTITIONS_FROM = "%2F";
const SCALE_SET_PARTITIONS_TO = "%2G";

export class EtagCacheTable implements ModelCache, VmNicRows {
  /**
   * The writes a reconcile makes to one scale set's rows in the same turn (its instances marked before their writes,
   * stored as listed) go in one transaction.
   */
  private readonly writes: PartitionBatcher;

  constructor(
    readonly table: TableClient,
    readonly enabled: boolean,
    private readonly now: () => number = Date.now,
    /** The stores that keep rows of a scale set beside its cache rows. */
    private readonly otherRows: ScaleSetRows[] = [],
    private readonly unreadable?: UnreadableRow,
    /** POOLSYNC_CACHE_KEY's; by default a random key of this process. */
    private readonly mac: CacheRowMac = new CacheRowMac(""),
  ) {
    this.writes = new PartitionBatcher(table);
  }

  /**
   * Every row of the scale set partitions, small columns only, for the status census; no table yet = none. Keys
   * of scale set partitions start with the encoded "/" (see tableKeys); the "~…" partitions are other stores' and
   * are not read. `maxRows`: the caller stops after this many rows and one more (that one says "there is more"); no
   * page beyond them is fetched.
   */
  async *censusRows(maxRows = Number.POSITIVE_INFINITY): AsyncIterable<{
    scaleSetId: string;
    instanceId?: string;
    stale: boolean;
    staleReason?: string;
    staleAt?: number;
    readAt?: number;
  }> {
    const rows = this.table.listEntities<{
      resourceId?: string;
      stale?: boolean;
      staleReason?: string;
      staleAt?: number;
      readAt?: number;
    }>({
      queryOptions: {
        filter: odata`PartitionKey ge ${SCALE_SET_PARTITIONS_FROM} and PartitionKey lt ${SCALE_SET_PARTITIONS_TO}`,
        select: ["PartitionKey", "RowKey", "resourceId", "stale", "staleReason", "staleAt", "readAt"],
      },
    });
    const wanted = maxRows + 1;
    let yielded = 0;
    try {
      for await (const page of rows.byPage({ maxPageSize: Math.min(1000, wanted) }))
        for (const row of page) {
          if (yielded++ >= wanted) return;
          const partitionKey = row.partitionKey ?? "";
          const rowKey = row.rowKey ?? "";
          if (!partitionKey.startsWith("%2F")) continue;
          const instanceId = rowKey.startsWith("vm-") ? rowKey.slice(3) : undefined;
          yield {
            scaleSetId: decodeKey(partitionKey),
            ...(instanceId !== undefined ? { instanceId } : {}),
            stale: row.stale === true,
            ...(row.staleReason ? { staleReason: row.staleReason } : {}),
            ...(row.staleAt !== undefined ? { staleAt: Number(row.staleAt) } : {}),
            ...(row.readAt !== undefined ? { readAt: Number(row.readAt) } : {}),
          };
        }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
  }

  async readPartition(scaleSet: TargetRef): Promise<CachedPartition> {
    const out: CachedPartition = { scaleSet: undefined, instances: new Map() };
    if (!this.enabled) return out;
    const rows = this.table.listEntities<CacheRow>({
      queryOptions: { filter: odata`PartitionKey eq ${cachePartition(scaleSet)}` },
    });
    for await (const row of rows) {
      if (row.rowKey === SCALE_SET_ROW) out.scaleSet = entryOf<ScaleSetModel>(row, this.mac, this.unreadable);
      else if (row.rowKey.startsWith("vm-"))
        out.instances.set(row.rowKey.slice(3), entryOf<InstanceModel>(row, this.mac, this.unreadable));
    }
    return out;
  }

  storeScaleSet(
    ref: ScaleSetRef,
    model: ScaleSetModel,
    base: string | undefined,
    ourClientRequestId?: string,
  ): Promise<boolean> {
    return this.store(
      cachePartition(ref),
      SCALE_SET_ROW,
      "scaleSet",
      model.id,
      model.etag,
      model,
      base,
      ourClientRequestId,
    );
  }

  refreshScaleSet(ref: ScaleSetRef, model: ScaleSetModel, base: string): Promise<boolean> {
    return this.store(
      cachePartition(ref),
      SCALE_SET_ROW,
      "scaleSet",
      model.id,
      model.etag,
      model,
      base,
      undefined,
      {},
      false,
    );
  }

  async listGroupRows(scope: ResourceGroupScope): Promise<GroupRow[]> {
    if (!this.enabled) return [];
    const [from, to] = groupScaleSetPartitions(scope);
    const rows = this.table.listEntities<CacheRow>({
      queryOptions: {
        filter: odata`PartitionKey ge ${from} and PartitionKey lt ${to} and RowKey eq ${SCALE_SET_ROW}`,
        select: ["PartitionKey", "stale", "staleAt", "readAt", "pendingClientRequestId"],
      },
    });
    const out: GroupRow[] = [];
    for await (const row of rows) {
      out.push({
        scaleSetKey: decodeKey(row.partitionKey),
        stale: row.stale === true,
        staleAt: Number(row.staleAt ?? 0),
        readAt: Number(row.readAt ?? 0),
        rowEtag: row.etag,
        writing: Boolean(row.pendingClientRequestId),
      });
    }
    return out;
  }

  storeInstance(
    ref: InstanceRef,
    model: InstanceModel,
    base: string | undefined,
    ourClientRequestId?: string,
    listedUnder?: string,
  ): Promise<boolean> {
    // Always written (a Merge keeps what it does not name): a store without it must not inherit an older vouch.
    return this.store(
      cachePartition(ref.scaleSet),
      instanceRow(ref.instanceId),
      "instance",
      model.id,
      model.etag,
      model,
      base,
      ourClientRequestId,
      {
        listedUnder: listedUnder ?? "",
      },
    );
  }

  storeResource(
    ref: CachedResourceRef,
    model: NicModel | VmModel,
    base: string | undefined,
    ourClientRequestId?: string,
  ): Promise<boolean> {
    return this.store(...cacheRowKeys(ref), ref.kind, model.id, model.etag, model, base, ourClientRequestId);
  }

  async evictResource(ref: CachedResourceRef): Promise<void> {
    if (!this.enabled) return;
    await unless404(() => this.table.deleteEntity(...cacheRowKeys(ref)));
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
    extra: Partial<CacheRow> = {},
    /** False for a read on another's behalf: the row's idle age is left as it was. */
    touch = true,
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
      ...(touch ? { touchedAt: now } : {}),
      ...extra,
    };
    const signed = { ...entity, [MAC_COLUMN]: this.mac.sign(macFieldsOf(entity)) };
    try {
      await this.writes.write(
        base === undefined
          ? { kind: "create", entity: signed }
          : { kind: "update", entity: signed, mode: "Merge", etag: base },
      );
      return true;
    } catch (err) {
      // 409: someone created the row since our read; 412: someone (an invalidation) changed it. Either way ours is
      // older.
      if (statusOf(err) === 409 || statusOf(err) === 412 || statusOf(err) === 404) return false;
      throw err;
    }
  }

  async markStale(ref: ScaleSetRef | InstanceRef | CachedResourceRef, reason: string): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    return this.markStaleRow(...cacheRowKeys(ref), reason);
  }

  async markStaleIfCached(ref: ScaleSetRef | InstanceRef | CachedResourceRef, reason: string): Promise<boolean> {
    if (!this.enabled) return false;
    const [partitionKey, rowKey] = cacheRowKeys(ref);
    try {
      // If-Match "*": a merge that never creates the row.
      await this.table.updateEntity(
        { partitionKey, rowKey, stale: true, staleReason: reason.slice(0, 1024), staleAt: this.now() },
        "Merge",
        { etag: "*" },
      );
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
  }

  async beginWrite(
    ref: ScaleSetRef | InstanceRef | CachedResourceRef,
    clientRequestId: string,
  ): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    const [pk, rk] = cacheRowKeys(ref);
    return this.writes.write({
      kind: "upsert",
      entity: {
        partitionKey: pk,
        rowKey: rk,
        stale: true,
        staleReason: "our write in flight",
        staleAt: this.now(),
        pendingClientRequestId: clientRequestId,
        touchedAt: this.now(),
      },
      mode: "Merge",
    });
  }

  private async markStaleRow(partitionKey: string, rowKey: string, reason: string): Promise<string | undefined> {
    // Upsert, not update: a marker on a missing row makes a concurrent create-only store fail, as it must.
    return this.writes.write({
      kind: "upsert",
      entity: { partitionKey, rowKey, stale: true, staleReason: reason.slice(0, 1024), staleAt: this.now() },
      mode: "Merge",
    });
  }

  private keysOf(ref: ScaleSetRef | InstanceRef | CachedResourceRef): [string, string] {
    return cacheRowKeys(ref);
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
    return row ? entryOf<unknown>(row, this.mac, this.unreadable) : undefined;
  }

  async readVmNics(target: TargetRef, max: number): Promise<{ vms: CachedVmNics[]; truncated: boolean }> {
    if (!this.enabled) return { vms: [], truncated: false };
    const vms: CachedEntry<VmModel>[] = [];
    let truncated = false;
    if (target.kind === "vm") {
      const row = await this.getRow(...cacheRowKeys(target));
      if (row) vms.push(entryOf<VmModel>(row, this.mac, this.unreadable));
    } else {
      // A Flexible scale set's VMs are in its resource group (that is where the reconcile lists them): one range
      // query over the group's VM partitions, each VM's row saying which scale set it belongs to.
      const [from, to] = groupVmPartitions(target);
      const rows = this.table.listEntities<CacheRow>({
        queryOptions: {
          filter: odata`PartitionKey ge ${from} and PartitionKey lt ${to} and RowKey eq ${RESOURCE_ROW.vm}`,
        },
      });
      for await (const row of rows) {
        const entry = entryOf<VmModel>(row, this.mac, this.unreadable);
        const of = entry.model?.scaleSetId;
        if (of === undefined || !sameResource(of, target.id)) continue;
        if (vms.length >= max) {
          truncated = true;
          break;
        }
        vms.push(entry);
      }
    }
    const out = await Promise.all(
      vms.map(async (vm) => ({
        vm,
        nics: await Promise.all(
          (vm.model?.nicIds ?? []).map(async (id) => {
            const ref = parseNicId(id);
            const row = ref.ok ? await this.getRow(...cacheRowKeys(ref.value)) : undefined;
            return { id, entry: row ? entryOf<NicModel>(row, this.mac, this.unreadable) : undefined };
          }),
        ),
      })),
    );
    return { vms: out, truncated };
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
      const scaleSetId = row.resourceId
        ? isInstance
          ? row.resourceId.replace(/\/virtualMachines\/[^/]+$/i, "")
          : row.resourceId
        : decodeKey(row.partitionKey);
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
    const rows = this.table.listEntities<CacheRow>({
      queryOptions: { filter: odata`RowKey eq ${SCALE_SET_ROW} and armEtag ne ''`, select: ["PartitionKey"] },
    });
    for await (const row of rows) out.add(decodeKey(row.partitionKey));
    return out;
  }

  async evictScaleSet(ref: TargetRef): Promise<void> {
    // Even with the cache off: their rows are not cached models.
    for (const owner of this.otherRows) await owner.forget(ref);
    if (!this.enabled) return;
    const rows = this.table.listEntities<CacheRow>({
      queryOptions: { filter: odata`PartitionKey eq ${cachePartition(ref)}`, select: ["RowKey"] },
    });
    const keys: string[] = [];
    for await (const row of rows) keys.push(row.rowKey);
    // One partition: delete in transactions of at most 100, the batch limit.
    for (let i = 0; i < keys.length; i += 100) {
      await this.table.submitTransaction(
        keys.slice(i, i + 100).map((rk) => ["delete", { partitionKey: cachePartition(ref), rowKey: rk }]),
      );
    }
  }

  async evictInstance(ref: InstanceRef): Promise<void> {
    if (!this.enabled) return;
    await unless404(() => this.table.deleteEntity(...cacheRowKeys(ref)));
  }
}
