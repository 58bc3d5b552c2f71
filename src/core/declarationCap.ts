import { declarationKey, type Declaration, type StoredDeclaration } from "./declarations";

/**
 * How many declarations one scale set may hold. Every one is an intent in the same write and a row the reconcile
 * reads and records; a partition grown without bound (a script declaring in a loop) would make each reconcile slower
 * and each write larger. Well above any real scale set: a NIC takes far fewer pools than this.
 */
export const MAX_DECLARATIONS_PER_SCALE_SET = 200;

/**
 * The newest declarations beyond the cap: the older ones keep working, the excess is refused with a reason. An
 * `absent` is never refused nor counted: it only shrinks what is declared (intake enforces the cap: capRefusal below).
 */
export function overCap(declarations: readonly StoredDeclaration[]): Set<StoredDeclaration> {
  const present = declarations.filter((d) => d.state !== "absent");
  if (present.length <= MAX_DECLARATIONS_PER_SCALE_SET) return new Set();
  const byAge = [...present].sort(
    (a, b) => a.declaredAt.localeCompare(b.declaredAt) || a.requestId.localeCompare(b.requestId),
  );
  return new Set(byAge.slice(MAX_DECLARATIONS_PER_SCALE_SET));
}

/**
 * The declaration cap, enforced where declarations come in (the API and the queue) rather than only in the
 * reconcile, where a full partition of junk (made-up ip configuration names) refused the newest, real ones.
 * An `absent` always passes: it only ever shrinks what is declared. A new `present` is refused when the target
 * holds the cap already, or when its caller holds its share of it, so one caller cannot fill a target for others.
 * Replacing a declaration the target already holds adds nothing and always passes.
 */

/** One caller's share of a target's declarations (a real NIC takes a handful of pools; this is far above). */
export const MAX_DECLARATIONS_PER_CALLER = 50;

export function capRefusal(
  held: readonly StoredDeclaration[],
  d: Pick<Declaration, "state" | "backendPoolId" | "ipConfiguration" | "ipVersion" | "declaredBy">,
): string | undefined {
  if (d.state === "absent") return undefined;
  const key = declarationKey(d);
  if (held.some((h) => declarationKey(h) === key)) return undefined;
  const live = held.filter((h) => h.state === "present");
  if (live.length >= MAX_DECLARATIONS_PER_SCALE_SET)
    return `the target holds ${live.length} present declarations, the most one may (${MAX_DECLARATIONS_PER_SCALE_SET}); declare absent what is no longer needed`;
  const mine = live.filter((h) => h.declaredBy.id === d.declaredBy.id).length;
  if (mine >= MAX_DECLARATIONS_PER_CALLER)
    return `caller ${d.declaredBy.id} holds ${mine} present declarations on this target, the most one caller may (${MAX_DECLARATIONS_PER_CALLER})`;
  return undefined;
}
