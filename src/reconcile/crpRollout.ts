import type { InstanceModel } from "../core/models";
import { intentSatisfied, type PoolIntent } from "../core/networkProfile";
import type { ModelCache } from "../core/ports";
import { instanceRef, type ScaleSetRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";

/**
 * After a model that CRP rolls out itself (upgradePolicy Automatic or Rolling): true while some live instance does
 * not yet show what is declared. Their cached rows are then marked stale, since CRP moves them with no event, so the
 * next look (the reconcile's recheck, or the timer) lists them from ARM instead of trusting the cache.
 */
export async function awaitingCrpRollout(
  ref: ScaleSetRef,
  live: InstanceModel[],
  intents: PoolIntent[],
  cache: ModelCache,
): Promise<boolean> {
  const behind = live.filter((inst) => intents.some((intent) => intentSatisfied(inst.nics, intent) === false));
  await mapLimit(behind, 8, (inst) =>
    cache
      .markStale(
        instanceRef(ref, inst.instanceId),
        "CRP rolls the model out to this instance (upgradePolicy); no event says when",
      )
      .then(() => {}),
  );
  return behind.length > 0;
}
