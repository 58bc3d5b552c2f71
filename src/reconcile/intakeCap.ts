import { declarationKey, type Declaration, type StoredDeclaration } from "../core/declarations";
import { MAX_DECLARATIONS_PER_SCALE_SET } from "./declarationCap";

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
