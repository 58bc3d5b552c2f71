import { recount } from "../../core/declarationCap";
import { type Declaration, type Outcome, type StoredDeclaration } from "../../core/declarations";
import type { DeclarationStore, UpsertResult } from "../../core/ports";
import type { DeclaredResult } from "../../core/targetPasses";
import { parseTargetId, type TargetRef } from "../../core/resourceIds";
import { TargetConflict } from "./commitTarget";
import { decodeDeclaration, outcomeUpdate, REMOVED_RETENTION_MS } from "./declarationRows";
import { declareTarget } from "./declareTarget";
import { declarationRowKey, targetPartition } from "./rowKeys";
import type { TargetStore } from "./targetStore";

interface Waiting {
  d: Declaration;
  done: (r: DeclaredResult) => void;
  fail: (e: unknown) => void;
}

/**
 * The declarations outside a pass: for the timer (outcomes it records, finished absents it removes), the status views
 * and tests. Every write is conditional on the row as read; a removal changes the control row's counts with it.
 */
export class TargetDeclarations implements DeclarationStore {
  constructor(
    private readonly store: TargetStore,
    /** Called before the first declaration of a target not yet in the timer's index is stored. */
    private readonly index?: (ref: TargetRef) => Promise<void>,
  ) {}

  get table() {
    return this.store.table;
  }

  /** Upserts of one target in the same turn of the event loop: one transaction (parallel callers do not race). */
  private readonly pending = new Map<string, Waiting[]>();
  /** Targets with a batch being stored: what arrives meanwhile goes as the next batch. */
  private readonly storing = new Set<string>();

  /** Stores a declaration outside the intake (no declare window, nothing scheduled); over a cap it throws. */
  async upsert(target: TargetRef, d: Declaration): Promise<{ result: UpsertResult; stored: StoredDeclaration }> {
    const r = await new Promise<DeclaredResult>((done, fail) => {
      let group = this.pending.get(target.key);
      if (!group) {
        group = [];
        this.pending.set(target.key, group);
        if (!this.storing.has(target.key)) setImmediate(() => this.next(target));
      }
      group.push({ d, done, fail });
    });
    if (r.result === "refused") throw new Error(`refused: ${r.reason}`);
    return r;
  }

  private next(target: TargetRef): void {
    const group = this.pending.get(target.key);
    if (!group) return;
    this.pending.delete(target.key);
    this.storing.add(target.key);
    const batch = group.map((w) => ({ declaration: w.d, claimant: w.d.requestId }));
    void declareTarget(this.store, target, batch, undefined, this.index)
      .then(
        (out) => group.forEach((w, i) => w.done(out.results[i]!)),
        (err: unknown) => group.forEach((w) => w.fail(err)),
      )
      .finally(() => {
        this.storing.delete(target.key);
        if (this.pending.has(target.key)) this.next(target);
      });
  }

  async listForTarget(target: TargetRef): Promise<StoredDeclaration[]> {
    return (await this.store.readTarget(target)).declarations;
  }

  async recordOutcome(target: TargetRef, d: StoredDeclaration, outcome: Outcome): Promise<boolean> {
    try {
      await this.store.commit(targetPartition(target), [
        { kind: "merge", entity: { rowKey: declarationRowKey(d), ...outcomeUpdate(d, outcome) }, base: d.rowEtag },
      ]);
      return true;
    } catch (err) {
      if (err instanceof TargetConflict) return false;
      throw err;
    }
  }

  /**
   * Marks a finished declaration removed (its row stays as its key's newest until the retention passes), and stops
   * counting it, in one transaction with the control row. False when the row changed since it was read.
   */
  async remove(target: TargetRef, d: StoredDeclaration): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const control = await this.store.readControl(target);
      const counts = recount(control.state.counts, { state: d.state, callerId: d.declaredBy.id }, undefined);
      try {
        await this.store.commit(
          targetPartition(target),
          [
            {
              kind: "merge",
              entity: { rowKey: declarationRowKey(d), removedAt: new Date(this.store.now()).toISOString() },
              base: d.rowEtag,
            },
          ],
          { state: { ...control.state, seq: control.state.seq + 1, counts }, base: control.etag },
        );
        return true;
      } catch (err) {
        if (!(err instanceof TargetConflict)) throw err;
        // The declaration's row changed (a newer one replaced it): not ours to remove.
        const now = (await this.store.readTarget(target)).declarations.find(
          (x) => declarationRowKey(x) === declarationRowKey(d),
        );
        if (!now || now.rowEtag !== d.rowEtag) return false;
      }
    }
    return false;
  }

  /**
   * Every live declaration, by one filtered scan of the table. `purge`: also drop removal marks past their retention,
   * as the timer does; a reader such as GET /api/status leaves them (a GET makes no writes).
   */
  async *listAll(opts: { purge?: boolean } = {}): AsyncGenerator<StoredDeclaration> {
    const now = this.store.now();
    for await (const row of this.store.scanDeclarations()) {
      const decoded = decodeDeclaration(row, now);
      if (!decoded.ok) continue;
      if (!decoded.removedAt) {
        yield decoded.declaration;
        continue;
      }
      if (!opts.purge || now - Date.parse(decoded.removedAt) < REMOVED_RETENTION_MS) continue;
      const target = parseTargetId(decoded.declaration.scaleSetId);
      if (!target.ok) continue;
      await this.store
        .commit(targetPartition(target.value), [{ kind: "delete", rowKey: row.rowKey, base: row.etag as string }])
        .catch((err: unknown) => {
          if (!(err instanceof TargetConflict)) throw err;
        });
    }
  }
}
