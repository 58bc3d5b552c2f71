/**
 * A scale set's `upgradePolicy.mode` decides who brings its instances to a changed model. `Automatic` and `Rolling`:
 * CRP does, by itself, shortly after (Rolling in batches); an instance PUT would race it (and is refused with 409
 * during a rolling upgrade). `Manual` (and a mode not given): nothing happens to the instances until someone updates
 * each of them. No event announces CRP's own rollout, and the instances' ETags move under any cache.
 */
export function crpRollsOutModel(upgradeMode: string | undefined): boolean {
  const mode = (upgradeMode ?? "").toLowerCase();
  return mode === "automatic" || mode === "rolling";
}

/** How long after a model write on such a scale set a reconcile looks again whether every instance has it. */
export const ROLLOUT_RECHECK_MS = 30_000;
