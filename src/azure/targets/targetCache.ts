import { odata } from "@azure/data-tables";
import type { InstanceModel, NicModel, ScaleSetModel, VmModel } from "../../core/models";
import type {
  CachedEntry,
  CachedPartition,
  CachedResourceRef,
  CachedVmNics,
  GroupRow,
  ModelCache,
  RefreshCandidate,
  ResourceGroupScope,
  VmNicRows,
} from "../../core/ports";
import { parseNicId, sameResource, type InstanceRef, type ScaleSetRef, type TargetRef } from "../../core/resourceIds";
import { decodeKey } from "../../core/tableKeys";
import { ModelTooLargeError } from "../modelCodec";
import { statusOf } from "../tableErrors";
import { cacheEntity, decodeCacheRow, staleColumns, type CacheRowKind } from "./cacheRows";
import { TargetConflict, type TargetWrite } from "./commitTarget";
import { listGroupModelRows } from "./groupRows";
import type { ResourceOwners } from "./passCache";
import { instanceRowKey, MODEL_ROW, nicRowKey, targetPartition, vmRowKey } from "./rowKeys";
import type { TargetStore } from "./targetStore";

/** Which target's partition holds a NIC's or VM's row (a VM target's own; a Flexible scale set's VM's). */
export interface OwnerLookup {
  ownerOf(resource: CachedResourceRef): Promise<TargetRef | undefined>;
}

/**
 * The cache outside a pass (the timer, events, the status views, plans): each call one read or one conditional write
 * of the target's partition. A store is conditional on the row's Table ETag as read before the ARM call; an
 * invalidation is unconditional, so a refresh that read ARM before it can never overwrite it with older state.
 */
export class TargetCache implements ModelCache, VmNicRows {
  constructor(
    private readonly store: TargetStore,
    private readonly owners: ResourceOwners & OwnerLookup,
  ) {}

  get enabled(): boolean {
    return this.store.cacheEnabled;
  }

  get table() {
    return this.store.table;
  }

  async readPartition(target: TargetRef): Promise<CachedPartition> {
    if (!this.enabled) return { scaleSet: undefined, instances: new Map() };
    const s = await this.store.readTarget(target);
    return { scaleSet: s.model, instances: s.instances };
  }

  /** A resource's partition and row key; NIC and VM rows live in their owner's partition. */
  private async placeOf(
    ref: ScaleSetRef | InstanceRef | CachedResourceRef,
  ): Promise<{ partitionKey: string; rowKey: string } | undefined> {
    switch (ref.kind) {
      case "scaleSet":
        return { partitionKey: targetPartition(ref), rowKey: MODEL_ROW };
      case "instance":
        return { partitionKey: targetPartition(ref.scaleSet), rowKey: instanceRowKey(ref.instanceId) };
      case "nic":
      case "vm": {
        // A VM that is a target of its own holds its row itself; a Flexible scale set's VM, its scale set.
        const owner = (await this.owners.ownerOf(ref)) ?? (ref.kind === "vm" ? ref : undefined);
        if (!owner) return undefined;
        return { partitionKey: targetPartition(owner), rowKey: ref.kind === "nic" ? nicRowKey(ref) : vmRowKey(ref) };
      }
    }
  }

  private async write(partitionKey: string, w: TargetWrite): Promise<boolean> {
    try {
      await this.store.commit(partitionKey, [w]);
      return true;
    } catch (err) {
      if (err instanceof TargetConflict) return false;
      throw err;
    }
  }

  private async put(
    place: { partitionKey: string; rowKey: string },
    kind: CacheRowKind,
    model: { id: string; etag: string },
    base: string | undefined,
    opts: { listedUnder?: string; touch?: boolean } = {},
  ): Promise<boolean> {
    if (!this.enabled) return false;
    let entity;
    try {
      entity = cacheEntity(place, kind, model.id, model.etag, model, this.store.now(), this.store.mac, opts);
    } catch (err) {
      if (!(err instanceof ModelTooLargeError)) throw err;
      await this.mark(place, `not cacheable: ${err.message}`);
      return false;
    }
    const e = entity as Record<string, unknown> & { rowKey: string };
    return this.write(
      place.partitionKey,
      base === undefined ? { kind: "create", entity: e } : { kind: "merge", entity: e, base },
    );
  }

  storeScaleSet(ref: ScaleSetRef, model: ScaleSetModel, base: string | undefined): Promise<boolean> {
    return this.put({ partitionKey: targetPartition(ref), rowKey: MODEL_ROW }, "scaleSet", model, base);
  }

  refreshScaleSet(ref: ScaleSetRef, model: ScaleSetModel, base: string): Promise<boolean> {
    return this.put({ partitionKey: targetPartition(ref), rowKey: MODEL_ROW }, "scaleSet", model, base, {
      touch: false,
    });
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
    return this.put(
      { partitionKey: targetPartition(ref.scaleSet), rowKey: instanceRowKey(ref.instanceId) },
      "instance",
      model,
      base,
      { listedUnder: listedUnder ?? "" },
    );
  }

  private async mark(place: { partitionKey: string; rowKey: string }, reason: string): Promise<string | undefined> {
    const { rows } = await this.store.commit(place.partitionKey, [
      { kind: "upsert", entity: { rowKey: place.rowKey, ...staleColumns(reason, this.store.now()) } },
    ]);
    return rows.get(place.rowKey);
  }

  async markStale(ref: ScaleSetRef | InstanceRef | CachedResourceRef, reason: string): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    const place = await this.placeOf(ref);
    return place ? this.mark(place, reason) : undefined;
  }

  async beginWrite(ref: ScaleSetRef | InstanceRef | CachedResourceRef): Promise<string | undefined> {
    return (await this.readEntry(ref))?.rowEtag;
  }

  async readEntry(ref: ScaleSetRef | InstanceRef | CachedResourceRef): Promise<CachedEntry<unknown> | undefined> {
    if (!this.enabled) return undefined;
    const place = await this.placeOf(ref);
    if (!place) return undefined;
    try {
      const row = await this.store.table.getEntity<Record<string, unknown>>(place.partitionKey, place.rowKey);
      return decodeCacheRow(row as typeof row & { etag: string }, this.store.mac, this.store.now());
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** Rows that are stale or were read before `readBefore`, from one filtered scan of every target's cache rows. */
  async listRefreshCandidates(readBefore: number): Promise<RefreshCandidate[]> {
    if (!this.enabled) return [];
    const out: RefreshCandidate[] = [];
    try {
      for await (const row of this.store.table.listEntities<Record<string, unknown>>({
        queryOptions: {
          filter: odata`RowKey ge ${"c|i|"} and RowKey lt ${"c|n|"} or RowKey eq ${MODEL_ROW}`,
          select: ["PartitionKey", "RowKey", "resourceId", "stale", "staleAt", "readAt", "touchedAt"],
        },
      })) {
        const stale = row["stale"] === true;
        const readAt = Number(row["readAt"] ?? 0) || 0;
        if (!stale && readAt >= readBefore) continue;
        const rowKey = row.rowKey ?? "";
        const isInstance = rowKey.startsWith("c|i|");
        out.push({
          scaleSetId: decodeKey(row.partitionKey ?? ""),
          instanceId: isInstance ? rowKey.slice(4) : undefined,
          stale,
          since: stale ? Number(row["staleAt"] ?? 0) || 0 : readAt,
          touchedAt: Number(row["touchedAt"] ?? readAt) || 0,
          rowEtag: row.etag ?? "",
        });
      }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    return out;
  }

  async listCachedScaleSets(): Promise<Set<string>> {
    const out = new Set<string>();
    if (!this.enabled) return out;
    try {
      for await (const row of this.store.table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: odata`RowKey eq ${MODEL_ROW} and armEtag ne ''`, select: ["PartitionKey"] },
      }))
        out.add(decodeKey(row.partitionKey ?? ""));
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    return out;
  }

  /**
   * Every scale set model and instance row, small columns only, for the status census; no table yet = none. The
   * caller stops after `maxRows` and one more (that one says "there is more"); no page beyond them is fetched.
   */
  async *censusRows(maxRows = Number.POSITIVE_INFINITY): AsyncIterable<{
    scaleSetId: string;
    instanceId?: string;
    stale: boolean;
    staleReason?: string;
    staleAt?: number;
    readAt?: number;
  }> {
    const wanted = maxRows + 1;
    let yielded = 0;
    try {
      const rows = this.store.table.listEntities<Record<string, unknown>>({
        queryOptions: {
          filter: odata`RowKey eq ${MODEL_ROW} or (RowKey ge ${"c|i|"} and RowKey lt ${"c|j"})`,
          select: ["PartitionKey", "RowKey", "stale", "staleReason", "staleAt", "readAt"],
        },
      });
      for await (const page of rows.byPage({ maxPageSize: Math.min(1000, wanted) }))
        for (const row of page) {
          if (yielded++ >= wanted) return;
          const rowKey = row.rowKey ?? "";
          const staleReason = typeof row["staleReason"] === "string" ? row["staleReason"] : "";
          yield {
            scaleSetId: decodeKey(row.partitionKey ?? ""),
            ...(rowKey.startsWith("c|i|") ? { instanceId: rowKey.slice(4) } : {}),
            stale: row["stale"] === true,
            ...(staleReason ? { staleReason } : {}),
            ...(row["staleAt"] !== undefined ? { staleAt: Number(row["staleAt"]) } : {}),
            ...(row["readAt"] !== undefined ? { readAt: Number(row["readAt"]) } : {}),
          };
        }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
  }

  async evictScaleSet(ref: TargetRef): Promise<void> {
    const snapshot = await this.store.readTarget(ref);
    const keys = [
      ...(snapshot.model ? [MODEL_ROW] : []),
      ...[...snapshot.instances.keys()].map(instanceRowKey),
      ...snapshot.nics.keys(),
      ...snapshot.vms.keys(),
    ];
    const control = snapshot.control;
    const reset = control.window !== undefined || control.debounceAt !== 0 || control.attempt !== undefined;
    if (keys.length === 0 && !reset) return;
    try {
      await this.store.commit(
        snapshot.partitionKey,
        keys.map((rowKey) => ({ kind: "delete" as const, rowKey })),
        reset
          ? { state: { ...control, window: undefined, debounceAt: 0, attempt: undefined }, base: snapshot.controlEtag }
          : undefined,
      );
    } catch (err) {
      // Someone wrote the target meanwhile: its rows are theirs now (a pass re-reads what it needs).
      if (!(err instanceof TargetConflict)) throw err;
    }
  }

  async evictInstance(ref: InstanceRef): Promise<void> {
    if (!this.enabled) return;
    await this.write(targetPartition(ref.scaleSet), {
      kind: "delete",
      rowKey: instanceRowKey(ref.instanceId),
      base: "*",
    });
  }

  async storeResource(ref: CachedResourceRef, model: NicModel | VmModel, base: string | undefined): Promise<boolean> {
    const place = await this.placeOf(ref);
    if (!place) return false;
    return this.put(place, ref.kind, model, base);
  }

  async evictResource(ref: CachedResourceRef): Promise<void> {
    if (!this.enabled) return;
    const place = await this.placeOf(ref);
    if (place) await this.write(place.partitionKey, { kind: "delete", rowKey: place.rowKey, base: "*" });
  }

  /**
   * The VMs and NICs a target's reconcile cached, for the status views: a VM target's own; a Flexible scale set's VMs
   * (rows of its partition), at most `max` of them. Only rows, never ARM.
   */
  async readVmNics(target: TargetRef, max: number): Promise<{ vms: CachedVmNics[]; truncated: boolean }> {
    if (!this.enabled) return { vms: [], truncated: false };
    const s = await this.store.readTarget(target);
    const vms = [...s.vms.values()].filter(
      (e) => target.kind === "vm" || (e.model?.scaleSetId !== undefined && sameResource(e.model.scaleSetId, target.id)),
    );
    const shown = vms.slice(0, max);
    return {
      truncated: vms.length > max,
      vms: shown.map((vm) => ({
        vm,
        nics: (vm.model?.nicIds ?? []).map((id) => {
          const ref = parseNicId(id);
          return { id, entry: ref.ok ? s.nics.get(nicRowKey(ref.value)) : undefined };
        }),
      })),
    };
  }
}
