import type { StoredDeclaration } from "../core/declarations";

/**
 * How many declarations one scale set may hold. Every one is an intent in the same write and a row the reconcile
 * reads and records; a partition grown without bound (a script declaring in a loop) would make each reconcile slower
 * and each write larger. Well above any real scale set: a NIC takes far fewer pools than this.
 */
export const MAX_DECLARATIONS_PER_SCALE_SET = 200;

/**
 * The newest declarations beyond the cap: the older ones keep working, the excess is refused with a reason. An
 * `absent` is never refused nor counted: it only shrinks what is declared (intake enforces the cap; see intakeCap.ts).
 */
export function overCap(declarations: readonly StoredDeclaration[]): Set<StoredDeclaration> {
  const present = declarations.filter((d) => d.state !== "absent");
  if (present.length <= MAX_DECLARATIONS_PER_SCALE_SET) return new Set();
  const byAge = [...present].sort((a, b) => a.declaredAt.localeCompare(b.declaredAt) || a.requestId.localeCompare(b.requestId));
  return new Set(byAge.slice(MAX_DECLARATIONS_PER_SCALE_SET));
}
