import type { ControlState } from "../../core/control";
import type { Outcome, StoredDeclaration } from "../../core/declarations";
import { TargetConflict, type Committed, type TargetWrite } from "./commitTarget";
import { outcomeUpdate } from "./declarationRows";
import type { TargetSnapshot } from "./readTarget";
import { declarationRowKey } from "./rowKeys";

/** The control row as this process last wrote or read it: shared by a pass's renewals and its final commit. */
export interface ControlHandle {
  state: ControlState;
  etag: string | undefined;
}

/** What a target store does for a pass's writes: read the partition again, and commit a transaction. */
export interface TargetCommits {
  read(snapshot: TargetSnapshot): Promise<TargetSnapshot>;
  commit(
    partitionKey: string,
    writes: readonly TargetWrite[],
    control?: { state: ControlState; base: string | undefined },
  ): Promise<Committed>;
}

type CacheOp =
  | { kind: "store"; entity: Record<string, unknown> & { rowKey: string }; base: string | undefined }
  | { kind: "stale"; columns: Record<string, unknown> }
  | { kind: "delete"; base: string };

/** The most history rows one commit carries beside the control row and the outcomes. */
const MAX_HISTORY_PER_COMMIT = 40;

/**
 * What one pass writes to its target's partition, gathered while it runs and written at its end with the control row
 * (the lease's release) in one transaction: outcomes, cache rows, history, drifts. Each write keeps the condition it
 * was made on (a declaration's row as served, a cache row as read), so a change someone made meanwhile wins: when the
 * transaction loses a race, the partition is read again and what still holds is written (an outcome whose declaration
 * was replaced, a store over a row an event invalidated, are dropped).
 */
export class PassWrites {
  private readonly outcomes = new Map<string, { d: StoredDeclaration; outcome: Outcome }>();
  private readonly cache = new Map<string, CacheOp>();
  private readonly creates: Array<Record<string, unknown> & { rowKey: string }> = [];
  private readonly upserts = new Map<string, Record<string, unknown> & { rowKey: string }>();
  private readonly patches: Array<(s: ControlState) => ControlState> = [];

  constructor(
    private readonly store: TargetCommits,
    private snapshot: TargetSnapshot,
    readonly control: ControlHandle,
  ) {}

  get partitionKey(): string {
    return this.snapshot.partitionKey;
  }

  recordOutcome(d: StoredDeclaration, outcome: Outcome): void {
    this.outcomes.set(declarationRowKey(d), { d, outcome });
  }

  /** The outcome this pass will write for `d`, if any (so a second record in the same pass compares against it). */
  pendingOutcome(d: StoredDeclaration): Outcome | undefined {
    const o = this.outcomes.get(declarationRowKey(d));
    return o && o.d.requestId === d.requestId ? o.outcome : undefined;
  }

  /** A cache row as ARM answered; `base` the row's Table ETag as read before the ARM call (undefined: no row). */
  storeCache(entity: Record<string, unknown> & { rowKey: string }, base: string | undefined): void {
    const earlier = this.cache.get(entity.rowKey);
    // The first condition stands: what this pass stores later was read after it.
    const first = earlier?.kind === "store" ? earlier.base : earlier?.kind === "delete" ? earlier.base : base;
    this.cache.set(entity.rowKey, { kind: "store", entity, base: first });
  }

  markStale(rowKey: string, columns: Record<string, unknown>): void {
    const earlier = this.cache.get(rowKey);
    // A store this pass made stays, marked: a stale row is re-read, whatever it holds.
    if (earlier?.kind === "store") this.cache.set(rowKey, { ...earlier, entity: { ...earlier.entity, ...columns } });
    else if (earlier?.kind !== "delete") this.cache.set(rowKey, { kind: "stale", columns });
  }

  evict(rowKey: string, base: string | undefined): void {
    if (base === undefined) this.cache.delete(rowKey);
    else this.cache.set(rowKey, { kind: "delete", base });
  }

  /** A row created once (history): never conditional, never repeated. */
  create(entity: Record<string, unknown> & { rowKey: string }): void {
    this.creates.push(entity);
  }

  /** A row replaced whole (a declaration's last drift). */
  upsert(entity: Record<string, unknown> & { rowKey: string }): void {
    this.upserts.set(entity.rowKey, entity);
  }

  /** A change to the control row made with the pass's writes (the target gone: its window and chain with it). */
  patchControl(f: (s: ControlState) => ControlState): void {
    this.patches.push(f);
  }

  get empty(): boolean {
    return this.outcomes.size + this.cache.size + this.creates.length + this.upserts.size + this.patches.length === 0;
  }

  /**
   * Writes everything with the control row changed by `change` (undefined: the control row is not written, and the
   * writes go alone; "abort": nothing is written, as the control row now stands). Answers the control state written
   * (or read, when not written), undefined when aborted.
   */
  async commit(
    change: (s: ControlState) => ControlState | undefined | "abort",
    maxTries = 6,
  ): Promise<ControlState | undefined> {
    for (let attempt = 0; ; attempt++) {
      const patched = this.patches.reduce((c, f) => f(c), this.control.state);
      const changed = change(patched);
      if (changed === "abort") {
        this.clear();
        return undefined;
      }
      const next = changed ?? (this.patches.length > 0 ? patched : undefined);
      const writes = this.writes();
      if (!next && writes.length === 0) return this.control.state;
      try {
        const { control: etag } = await this.store.commit(
          this.snapshot.partitionKey,
          writes,
          next ? { state: next, base: this.control.etag } : undefined,
        );
        if (next) {
          this.control.state = next;
          this.control.etag = etag;
        }
        this.clear();
        return this.control.state;
      } catch (err) {
        if (!(err instanceof TargetConflict) || attempt + 1 >= maxTries) throw err;
        await this.rebase(await this.store.read(this.snapshot));
      }
    }
  }

  private writes(): TargetWrite[] {
    const out: TargetWrite[] = [];
    // Cache rows first: past the last transaction's room (the control row's) they go in transactions before it
    // (commitTarget), where a lost race costs nothing but a re-read; outcomes and history stay with the control row.
    for (const [rowKey, op] of this.cache) {
      if (op.kind === "store")
        out.push(
          op.base === undefined
            ? { kind: "create", entity: op.entity }
            : { kind: "merge", entity: op.entity, base: op.base },
        );
      else if (op.kind === "stale") out.push({ kind: "upsert", entity: { rowKey, ...op.columns } });
      // Unconditional (in the transaction): a row evicted because its resource is gone stays gone.
      else out.push({ kind: "delete", rowKey });
    }
    for (const [rowKey, { d, outcome }] of this.outcomes)
      out.push({ kind: "merge", entity: { rowKey, ...outcomeUpdate(d, outcome) }, base: d.rowEtag });
    for (const e of this.creates.slice(0, MAX_HISTORY_PER_COMMIT)) out.push({ kind: "create", entity: e });
    for (const e of this.upserts.values()) out.push({ kind: "upsert", entity: e });
    return out;
  }

  private clear(): void {
    this.outcomes.clear();
    this.cache.clear();
    this.creates.length = 0;
    this.upserts.clear();
    this.patches.length = 0;
  }

  /** After a lost race: keep what still holds over the partition as it is now. */
  private rebase(now: TargetSnapshot): Promise<void> {
    this.snapshot = now;
    this.control.state = now.control;
    this.control.etag = now.controlEtag;
    const live = new Map(now.declarations.map((d) => [declarationRowKey(d), d] as const));
    for (const [rowKey, o] of this.outcomes) {
      const current = live.get(rowKey);
      // Replaced by a newer declaration (or removed): this pass did not serve it.
      if (!current || current.requestId !== o.d.requestId) this.outcomes.delete(rowKey);
      else this.outcomes.set(rowKey, { d: { ...o.d, rowEtag: current.rowEtag }, outcome: o.outcome });
    }
    const rowEtag = (rowKey: string): string | undefined => {
      if (rowKey === "c|model") return now.model?.rowEtag;
      if (rowKey.startsWith("c|i|")) return now.instances.get(rowKey.slice(4))?.rowEtag;
      return now.nics.get(rowKey)?.rowEtag ?? now.vms.get(rowKey)?.rowEtag;
    };
    for (const [rowKey, op] of this.cache) {
      const etag = rowEtag(rowKey);
      // Changed since this pass's read (an event's invalidation, another store): theirs stands.
      if (op.kind === "store" && etag !== op.base) this.cache.delete(rowKey);
      if (op.kind === "delete" && etag !== op.base) this.cache.delete(rowKey);
    }
    return Promise.resolve();
  }
}
