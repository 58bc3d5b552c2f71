import type { DeclarationCounts } from "./control";
import type { Declaration } from "./declarations";

/**
 * How many declarations one target may hold. Every one is an intent in the same write and a row the reconcile reads
 * and records; a partition grown without bound (a script declaring in a loop) would make each pass slower and each
 * write larger. Well above any real scale set: a NIC takes far fewer pools than this.
 *
 * The caps are enforced where declarations come in, against the counts in the target's control row, which change in
 * the same transaction as the declaration rows: they hold exactly under any parallelism (issue 41; before, a listing
 * then a write let 150 parallel declarations store 57 against a cap of 50).
 */
export const MAX_DECLARATIONS_PER_SCALE_SET = 200;

/** One caller's share of a target's present declarations (a real NIC takes a handful of pools; this is far above). */
export const MAX_DECLARATIONS_PER_CALLER = 50;

/**
 * Live `absent` rows a target may hold. An absent of a pool the target already holds a row for is always accepted (it
 * only replaces that row); a new one counts, so that thousands of them cannot make the intake or the status page slow.
 * A finished absent is removed by the timer and stops counting.
 */
export const MAX_ABSENT_PER_TARGET = 200;

/** What a declaration row holds that the counts see. */
export type Counted = Pick<Declaration, "state"> & { callerId: string };

/** The counts after `before` (undefined: no row) becomes `after` (undefined: the row goes). */
export function recount(
  counts: DeclarationCounts,
  before: Counted | undefined,
  after: Counted | undefined,
): DeclarationCounts {
  const next: DeclarationCounts = { present: counts.present, absent: counts.absent, byCaller: { ...counts.byCaller } };
  const add = (c: Counted, n: number) => {
    if (c.state === "absent") next.absent = Math.max(0, next.absent + n);
    else {
      next.present = Math.max(0, next.present + n);
      const v = Math.max(0, (next.byCaller[c.callerId] ?? 0) + n);
      if (v === 0) delete next.byCaller[c.callerId];
      else next.byCaller[c.callerId] = v;
    }
  };
  if (before) add(before, -1);
  if (after) add(after, 1);
  return next;
}

/** The counts of a set of rows, as a rebuilt control row starts from. */
export function countsOf(rows: readonly Counted[]): DeclarationCounts {
  return rows.reduce<DeclarationCounts>((c, r) => recount(c, undefined, r), { present: 0, absent: 0, byCaller: {} });
}

/**
 * Why `after` may not replace `before` (undefined: no row) under the caps, or undefined when it may. Nothing that
 * only shrinks what is declared is refused: a present becoming absent, or an absent replacing any row.
 */
export function capRefusal(
  counts: DeclarationCounts,
  before: Counted | undefined,
  after: Counted,
): { cap: string; reason: string } | undefined {
  if (after.state === "absent") {
    if (before) return undefined;
    if (counts.absent >= MAX_ABSENT_PER_TARGET)
      return {
        cap: "absent declarations per target",
        reason: `the target holds ${counts.absent} absent declarations not yet finished, the most one may (${MAX_ABSENT_PER_TARGET}); they are removed once applied everywhere`,
      };
    return undefined;
  }
  const addsPresent = before?.state !== "present";
  const movesCaller = !addsPresent && before?.callerId !== after.callerId;
  if (addsPresent && counts.present >= MAX_DECLARATIONS_PER_SCALE_SET)
    return {
      cap: "present declarations per target",
      reason: `the target holds ${counts.present} present declarations, the most one may (${MAX_DECLARATIONS_PER_SCALE_SET}); declare absent what is no longer needed`,
    };
  const mine = counts.byCaller[after.callerId] ?? 0;
  if ((addsPresent || movesCaller) && mine >= MAX_DECLARATIONS_PER_CALLER)
    return {
      cap: "present declarations per caller",
      reason: `caller ${after.callerId} holds ${mine} present declarations on this target, the most one caller may (${MAX_DECLARATIONS_PER_CALLER})`,
    };
  return undefined;
}

/**
 * The newest present declarations beyond the target cap, as a pass finds them: none the intake let in, but a store
 * written by an older version, or by hand, can hold more. The older ones keep working; the excess is refused with a
 * reason.
 */
export function overCap<D extends Pick<Declaration, "state" | "declaredAt" | "requestId">>(
  declarations: readonly D[],
): Set<D> {
  const present = declarations.filter((d) => d.state !== "absent");
  if (present.length <= MAX_DECLARATIONS_PER_SCALE_SET) return new Set();
  const byAge = [...present].sort(
    (a, b) => a.declaredAt.localeCompare(b.declaredAt) || a.requestId.localeCompare(b.requestId),
  );
  return new Set(byAge.slice(MAX_DECLARATIONS_PER_SCALE_SET));
}
