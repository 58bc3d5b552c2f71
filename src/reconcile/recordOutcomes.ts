import { notFoundOutcome, type Outcome, type StoredDeclaration } from "../core/declarations";
import type { Clock, DeclarationStore } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";
import { recordDeclarationOutcome } from "../telemetry/metrics";

/**
 * What a reconcile tells each declaration it served. An outcome equal to the stored one is not written again:
 * a reconcile that changes nothing costs no Table write.
 */
export class OutcomeRecorder {
  constructor(
    private readonly ref: TargetRef,
    private readonly declarations: DeclarationStore,
    private readonly clock: Clock,
  ) {}

  async record(d: StoredDeclaration, outcome: Omit<Outcome, "at">): Promise<void> {
    if (sameOutcome(d.outcome, outcome)) return;
    await this.declarations.recordOutcome(this.ref, d, { ...outcome, at: this.isoIn(0) });
    // Converged: the first time it shows applied since it was declared (declaredAt is the user's, or the intake's,
    // clock).
    const converged =
      outcome.kind === "applied" && d.outcome.kind !== "applied"
        ? this.clock.now() - Date.parse(d.declaredAt)
        : undefined;
    recordDeclarationOutcome(outcome.kind, Number.isFinite(converged) ? converged : undefined);
  }

  async recordAll(ds: StoredDeclaration[], outcome: Omit<Outcome, "at">): Promise<void> {
    // Bounded: one Table write per declaration, at most 8 in flight, however large the partition.
    await mapLimit(ds, 8, (d) => this.record(d, outcome));
  }

  /** ARM answered 404 for the target: each declaration waits, longer each time, for it to exist. */
  async recordNotFound(ds: StoredDeclaration[], reason: string): Promise<void> {
    await mapLimit(ds, 8, (d) => this.record(d, notFoundOutcome(d.outcome, reason, this.clock.now())));
  }

  /** A failure the timer tries again after `retryMs`. */
  failed(reason: string, retryMs: number): Omit<Outcome, "at"> {
    return { kind: "failed", reason, retryAt: this.isoIn(retryMs) };
  }

  private isoIn(ms: number): string {
    return new Date(this.clock.now() + ms).toISOString();
  }
}

function sameOutcome(a: Omit<Outcome, "at">, b: Omit<Outcome, "at">): boolean {
  return (
    a.kind === b.kind &&
    (a.reason ?? "") === (b.reason ?? "") &&
    (a.appliedEtag ?? "") === (b.appliedEtag ?? "") &&
    (a.appliedEverywhere ?? false) === (b.appliedEverywhere ?? false) &&
    (a.via ?? "") === (b.via ?? "") &&
    // A failure again moves its retry time on (and counts the attempt): else the timer retries it on every run.
    (a.retryAt ?? "") === (b.retryAt ?? "")
  );
}
