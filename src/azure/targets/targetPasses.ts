import { addDoubts, FREE_LEASE, type ControlState, type WriteInDoubt } from "../../core/control";
import type { Drift, DriftStore, LastWriters, SeenWriter } from "../../core/drift";
import type { HistoryEntry } from "../../core/history";
import type { OpenPass, PassTake, TargetPasses } from "../../core/targetPasses";
import type { TargetRef } from "../../core/resourceIds";
import { statusOf } from "../tableErrors";
import { historyEntity } from "./historyRows";
import { PassCache, type ResourceOwners } from "./passCache";
import { PassDeclarations } from "./passDeclarations";
import type { ControlHandle, PassWrites } from "./passWrites";
import type { TargetSnapshot } from "./readTarget";
import { driftRowKey, targetPartition, writerRowKey } from "./rowKeys";
import { TargetLeases } from "./targetLeases";
import type { TargetStore } from "./targetStore";

/** The reconcile's passes over the targets table (core/targetPasses.ts). */
export class StoreTargetPasses implements TargetPasses {
  private readonly leases: TargetLeases;

  constructor(
    private readonly store: TargetStore,
    private readonly owners?: ResourceOwners,
  ) {
    this.leases = new TargetLeases(store);
  }

  async acquire(ref: TargetRef, holder: string, ttlMs: number, fresh: boolean, close: boolean): Promise<PassTake> {
    const take = await this.leases.acquire(ref, holder, ttlMs, fresh, close);
    if (take.kind === "held") return take;
    return {
      kind: "acquired",
      pass: this.open(take.snapshot, take.control, holder),
      ...(take.handover ? { handover: take.handover } : {}),
    };
  }

  async releaseNow(ref: TargetRef, holder: string, handover?: string): Promise<void> {
    await this.store.updateControl(ref, (s) =>
      s.lease.holder === holder
        ? { state: { ...s, lease: { ...FREE_LEASE, handover: handover ?? s.lease.handover } }, result: undefined }
        : { state: undefined, result: undefined },
    );
  }

  async readControl(ref: TargetRef): Promise<ControlState> {
    return (await this.store.readControl(ref)).state;
  }

  private open(snapshot: TargetSnapshot, control: ControlHandle, holder: string): OpenPass {
    const writes = this.store.passWrites(snapshot, control);
    const store = this.store;
    const ref = snapshot.ref;
    const owners = this.owners;
    const reopen = async (): Promise<OpenPass> => {
      const next = await store.readTarget(ref);
      // The control row as this pass last wrote it stands (the read may be older than a renewal in flight).
      const handle: ControlHandle =
        next.controlEtag === control.etag ? control : { state: next.control, etag: next.controlEtag };
      return this.open({ ...next, control: handle.state, controlEtag: handle.etag }, handle, holder);
    };
    return {
      control: control.state,
      declarations: new PassDeclarations(snapshot, writes),
      cache: new PassCache(store, snapshot, writes, owners),
      drifts: new PassDrifts(writes, snapshot),
      writers: new PartitionWriters(store, ref),
      recordHistory: (entry: HistoryEntry) => writes.create(historyEntity(snapshot.partitionKey, entry, store.now())),
      recordDoubt: (doubt: WriteInDoubt) => writes.patchControl((c) => addDoubts(c, [doubt])),
      renew: (ttlMs: number) => this.leases.renew(ref, holder, ttlMs, control),
      commit: (change) => writes.commit(change),
      reopen,
    };
  }
}

/** A pass's drift records: committed with it, one row per declaration (its last drift). */
class PassDrifts implements DriftStore {
  constructor(
    private readonly writes: PassWrites,
    private readonly snapshot: TargetSnapshot,
  ) {}

  record(_target: TargetRef, declarationKey: string, drift: Drift): Promise<void> {
    this.writes.upsert({ rowKey: driftRowKey(declarationKey), drift: JSON.stringify(drift).slice(0, 16_000) });
    return Promise.resolve();
  }

  listForTarget(): Promise<Map<string, Drift>> {
    return Promise.reject(new Error(`a pass of ${this.snapshot.ref.id} does not list drifts`));
  }
}

/** The last foreign writer of a resource, as the event that invalidated its row recorded it in the target's partition. */
export class PartitionWriters implements Pick<LastWriters, "read"> {
  constructor(
    private readonly store: TargetStore,
    private readonly target: TargetRef,
  ) {}

  async read(resourceId: string): Promise<SeenWriter | undefined> {
    try {
      const row = await this.store.table.getEntity<{ caller?: unknown; seenAt?: unknown }>(
        targetPartition(this.target),
        writerRowKey(resourceId),
      );
      const caller: unknown = typeof row.caller === "string" ? JSON.parse(row.caller) : undefined;
      const seenAt = Number(row.seenAt);
      if (typeof caller !== "object" || caller === null || !Number.isFinite(seenAt)) return undefined;
      return { ...(caller as Omit<SeenWriter, "seenAt">), seenAt };
    } catch (err) {
      if (statusOf(err) === 404 || err instanceof SyntaxError) return undefined;
      throw err;
    }
  }
}
