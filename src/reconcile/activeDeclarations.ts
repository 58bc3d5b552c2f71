import type { Config } from "../config";
import { waitsForRetry, type StoredDeclaration } from "../core/declarations";
import { parseBackendPoolId, type TargetRef } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { bindingAllows, bindingRefusal } from "./bindingGate";
import { MAX_DECLARATIONS_PER_SCALE_SET, overCap } from "../core/declarationCap";
import type { OutcomeRecorder } from "./recordOutcomes";

/**
 * The declarations of a target this pass may write: each other one is recorded "refused" with its reason (pool
 * unparsable, outside POOLSYNC_SCOPES or POOLSYNC_BINDINGS, beyond the scale set's cap), or left for its retry time.
 * The pool rules are checked again here, not only at intake: they may have narrowed since the declaration was accepted.
 * A scale set's declarations are capped and wait out a failure's retry time; a VM's are not (as before this module).
 */
export async function activeDeclarations(
  target: TargetRef,
  declarations: readonly StoredDeclaration[],
  outcomes: OutcomeRecorder,
  config: Pick<Config, "scopes" | "bindings">,
  now: number,
): Promise<{ active: StoredDeclaration[]; waiting: number }> {
  const perScaleSet = target.kind === "scaleSet";
  const over = perScaleSet ? overCap(declarations) : new Set<StoredDeclaration>();
  const active: StoredDeclaration[] = [];
  let waiting = 0;
  for (const d of declarations) {
    if (over.has(d)) {
      await outcomes.record(d, {
        kind: "refused",
        reason: `the scale set has more than ${MAX_DECLARATIONS_PER_SCALE_SET} declarations; this is one of the newest`,
      });
      continue;
    }
    // A declaration that failed on its own waits for its retry time: writing it again sooner only fails again.
    if (perScaleSet && waitsForRetry(d, now)) {
      waiting++;
      continue;
    }
    const pool = parseBackendPoolId(d.backendPoolId);
    if (!pool.ok) await outcomes.record(d, { kind: "refused", reason: `backendPoolId ${pool.reason}` });
    else if (!inScopes(config.scopes, pool.value.subscriptionId, pool.value.resourceGroup)) {
      await outcomes.record(d, { kind: "refused", reason: "backend pool is outside POOLSYNC_SCOPES" });
    } else if (!bindingAllows(config.bindings, target.id, pool.value.id)) {
      await outcomes.record(d, { kind: "refused", reason: bindingRefusal(config.bindings, target.id, pool.value.id) });
    } else active.push(d);
  }
  return { active, waiting };
}
