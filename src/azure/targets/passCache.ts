import type { InstanceModel, NicModel, ScaleSetModel, VmModel } from "../../core/models";
import type {
  CachedEntry,
  CachedPartition,
  CachedResourceRef,
  GroupRow,
  ModelCache,
  RefreshCandidate,
  ResourceGroupScope,
} from "../../core/ports";
import type { InstanceRef, ScaleSetRef, TargetRef } from "../../core/resourceIds";
import { ModelTooLargeError } from "../modelCodec";
import { statusOf } from "../tableErrors";
import { cacheEntity, staleColumns, type CacheRowKind } from "./cacheRows";
import { listGroupModelRows } from "./groupRows";
import type { PassWrites } from "./passWrites";
import type { TargetSnapshot } from "./readTarget";
import { instanceRowKey, MODEL_ROW, nicRowKey, targetPartition, vmRowKey } from "./rowKeys";
import type { TargetStore } from "./targetStore";

/** Where an event naming only a NIC or a VM finds the target that caches it (shared table). */
export interface ResourceOwners {
  remember(resource: CachedResourceRef, target: TargetRef): Promise<void>;
}

/**
 * The cache as one pass sees it: its target's rows from the pass's one read, its stores and invalidations gathered
 * into the pass's writes (committed with the lease's release). Only a neighbour's model, read by one LIST of the
 * resource group, is stored at once, in that neighbour's partition.
 */
export class PassCache implements ModelCache {
  constructor(
    private readonly store: TargetStore,
    private readonly snapshot: TargetSnapshot,
    private readonly writes: PassWrites,
    private readonly owners?: ResourceOwners,
  ) {}

  get enabled(): boolean {
    return this.store.cacheEnabled;
  }

  private mine(target: TargetRef): boolean {
    return target.key === this.snapshot.ref.key;
  }

  async readPartition(target: TargetRef): Promise<CachedPartition> {
    if (!this.enabled) return { scaleSet: undefined, instances: new Map() };
    const s = this.mine(target) ? this.snapshot : await this.store.readTarget(target);
    return { scaleSet: s.model, instances: new Map(s.instances) };
  }

  private rowOf(ref: ScaleSetRef | InstanceRef | CachedResourceRef): {
    rowKey: string;
    entry: CachedEntry<unknown> | undefined;
  } {
    switch (ref.kind) {
      case "scaleSet":
        return { rowKey: MODEL_ROW, entry: this.snapshot.model };
      case "instance":
        return { rowKey: instanceRowKey(ref.instanceId), entry: this.snapshot.instances.get(ref.instanceId) };
      case "nic":
        return { rowKey: nicRowKey(ref), entry: this.snapshot.nics.get(nicRowKey(ref)) };
      case "vm":
        return { rowKey: vmRowKey(ref), entry: this.snapshot.vms.get(vmRowKey(ref)) };
    }
  }

  private put(
    rowKey: string,
    kind: CacheRowKind,
    resourceId: string,
    etag: string,
    model: unknown,
    base: string | undefined,
    listedUnder?: string,
  ): boolean {
    if (!this.enabled) return false;
    try {
      const entity = cacheEntity(
        { partitionKey: this.snapshot.partitionKey, rowKey },
        kind,
        resourceId,
        etag,
        model,
        this.store.now(),
        this.store.mac,
        listedUnder !== undefined ? { listedUnder } : {},
      );
      this.writes.storeCache(entity as Record<string, unknown> & { rowKey: string }, base);
      return true;
    } catch (err) {
      if (!(err instanceof ModelTooLargeError)) throw err;
      this.writes.markStale(rowKey, staleColumns(`not cacheable: ${err.message}`, this.store.now()));
      return false;
    }
  }

  storeScaleSet(ref: ScaleSetRef, model: ScaleSetModel, base: string | undefined): Promise<boolean> {
    return Promise.resolve(this.put(MODEL_ROW, "scaleSet", model.id, model.etag, model, base));
  }

  /** A neighbour's model from one LIST of the group: stored at once in its partition, its idle age left as it was. */
  async refreshScaleSet(ref: ScaleSetRef, model: ScaleSetModel, base: string): Promise<boolean> {
    if (!this.enabled) return false;
    if (this.mine(ref)) return this.storeScaleSet(ref, model, base);
    try {
      const entity = cacheEntity(
        { partitionKey: targetPartition(ref), rowKey: MODEL_ROW },
        "scaleSet",
        model.id,
        model.etag,
        model,
        this.store.now(),
        this.store.mac,
        { touch: false },
      );
      await this.store.table.updateEntity(entity as never, "Merge", { etag: base });
      return true;
    } catch (err) {
      const status = statusOf(err);
      if (err instanceof ModelTooLargeError || status === 412 || status === 404 || status === 409) return false;
      throw err;
    }
  }

  listGroupRows(scope: ResourceGroupScope): Promise<GroupRow[]> {
    return this.enabled ? listGroupModelRows(this.store, scope) : Promise.resolve([]);
  }

  storeInstance(
    ref: InstanceRef,
    model: InstanceModel,
    base: string | undefined,
    _ours?: string,
    listedUnder?: string,
  ): Promise<boolean> {
    // Always written: a store without a vouch must not inherit an older one.
    return Promise.resolve(
      this.put(instanceRowKey(ref.instanceId), "instance", model.id, model.etag, model, base, listedUnder ?? ""),
    );
  }

  markStale(ref: ScaleSetRef | InstanceRef | CachedResourceRef, reason: string): Promise<string | undefined> {
    if (!this.enabled) return Promise.resolve(undefined);
    const { rowKey, entry } = this.rowOf(ref);
    this.writes.markStale(rowKey, staleColumns(reason, this.store.now()));
    return Promise.resolve(entry?.rowEtag);
  }

  /**
   * Nothing to mark: our writes' own events are recognised by their client request IDs (core/requestIds.ts), a crash
   * mid-write leaves the row as read (the next write meets a 412 and re-reads), and a declaration is finished only
   * from what ARM answered in its pass. Answers the base for storing the write's answer.
   */
  beginWrite(ref: ScaleSetRef | InstanceRef | CachedResourceRef): Promise<string | undefined> {
    return Promise.resolve(this.rowOf(ref).entry?.rowEtag);
  }

  readEntry(ref: ScaleSetRef | InstanceRef | CachedResourceRef): Promise<CachedEntry<unknown> | undefined> {
    if (!this.enabled) return Promise.resolve(undefined);
    return Promise.resolve(this.rowOf(ref).entry);
  }

  listRefreshCandidates(): Promise<RefreshCandidate[]> {
    return Promise.reject(new Error("listRefreshCandidates is the timer's, not a pass's"));
  }

  listCachedScaleSets(): Promise<Set<string>> {
    return Promise.reject(new Error("listCachedScaleSets is the timer's, not a pass's"));
  }

  evictScaleSet(target: TargetRef): Promise<void> {
    if (!this.mine(target)) return Promise.reject(new Error("a pass evicts only its own target"));
    const s = this.snapshot;
    if (s.model) this.writes.evict(MODEL_ROW, s.model.rowEtag);
    for (const [id, e] of s.instances) this.writes.evict(instanceRowKey(id), e.rowEtag);
    for (const [rowKey, e] of s.nics) this.writes.evict(rowKey, e.rowEtag);
    for (const [rowKey, e] of s.vms) this.writes.evict(rowKey, e.rowEtag);
    // The target is gone: its window, debounce and attempt chain with it.
    this.writes.patchControl((c) => ({ ...c, window: undefined, debounceAt: 0, attempt: undefined }));
    return Promise.resolve();
  }

  evictInstance(ref: InstanceRef): Promise<void> {
    this.writes.evict(instanceRowKey(ref.instanceId), this.snapshot.instances.get(ref.instanceId)?.rowEtag);
    return Promise.resolve();
  }

  async storeResource(ref: CachedResourceRef, model: NicModel | VmModel, base: string | undefined): Promise<boolean> {
    const { rowKey, entry } = this.rowOf(ref);
    // A VM's row only says which target it belongs to and what NICs it has: not stored again while its ETag holds.
    if (ref.kind === "vm" && entry?.model && !entry.stale && (entry.model as VmModel).etag === model.etag) return true;
    const stored = this.put(rowKey, ref.kind, model.id, model.etag, model, base);
    // Which target an event naming only this NIC or VM wakes: kept with the cache off too.
    if (!entry) await this.owners?.remember(ref, this.snapshot.ref);
    return stored;
  }

  evictResource(ref: CachedResourceRef): Promise<void> {
    const { rowKey, entry } = this.rowOf(ref);
    this.writes.evict(rowKey, entry?.rowEtag);
    return Promise.resolve();
  }
}
