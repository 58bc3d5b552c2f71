import type { Declaration, Outcome, StoredDeclaration } from "../../core/declarations";
import type { DeclarationStore, UpsertResult } from "../../core/ports";
import type { TargetRef } from "../../core/resourceIds";
import type { PassWrites } from "./passWrites";
import type { TargetSnapshot } from "./readTarget";

/**
 * The declarations as one pass sees them: read once with the rest of its target's partition, each outcome gathered
 * into the pass's writes and written, conditional on the row as served, with the lease's release.
 */
export class PassDeclarations implements DeclarationStore {
  constructor(
    private readonly snapshot: TargetSnapshot,
    private readonly writes: PassWrites,
  ) {}

  upsert(_target: TargetRef, _d: Declaration): Promise<{ result: UpsertResult; stored: StoredDeclaration }> {
    return Promise.reject(new Error("a pass does not declare"));
  }

  listForTarget(target: TargetRef): Promise<StoredDeclaration[]> {
    if (target.key !== this.snapshot.ref.key) return Promise.reject(new Error("a pass reads only its own target"));
    return Promise.resolve([...this.snapshot.declarations]);
  }

  recordOutcome(_target: TargetRef, d: StoredDeclaration, outcome: Outcome): Promise<boolean> {
    this.writes.recordOutcome(d, outcome);
    return Promise.resolve(true);
  }

  remove(): Promise<boolean> {
    return Promise.reject(new Error("a pass does not remove declarations (the timer does)"));
  }
}
