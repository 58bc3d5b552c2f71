import type { BucketState } from "../core/tokenBucket";
import type { ScaleSetRef, TargetRef } from "../core/resourceIds";

/**
 * What the last lease holder left in the `~leases` row is storage content, hence input: only this scale set's own
 * buckets (`vmss|<key>`, `vm|<key>/…`) are restored, each with a finite token count within a bucket's size and a
 * closing time no further ahead than a capped Retry-After, so a planted handover can neither close another scale
 * set's budget nor this one's for ever.
 */

/** No bucket of a handover may hold more than this many tokens, or owe more (CRP's burst is 12). */
const MAX_TOKENS = 1_000;
/** ARM's longest Retry-After poolsync honours (armErrors.ts caps at 6 h). */
const MAX_CLOSED_MS = 6 * 3_600_000;

export function checkedHandover(text: string, target: TargetRef, now: number): Record<string, BucketState> {
  const out: Record<string, BucketState> = {};
  if (target.kind !== "scaleSet") return out;
  const key = (target as ScaleSetRef).key;
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error("handover is not an object of buckets");
  for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
    const instance =
      name.startsWith(`vm|${key}/virtualmachines/`) && /^[0-9]+$/.test(name.slice(`vm|${key}/virtualmachines/`.length));
    if (name !== `vmss|${key}` && !instance) continue;
    const { tokens, at } = (value ?? {}) as { tokens?: unknown; at?: unknown };
    if (typeof tokens !== "number" || typeof at !== "number" || !Number.isFinite(tokens) || !Number.isFinite(at))
      continue;
    if (Math.abs(tokens) > MAX_TOKENS || at > now + MAX_CLOSED_MS) continue;
    out[name] = { tokens, at };
  }
  return out;
}
