import type { StoredDeclaration } from "../core/declarations";
import type { CachedPartition } from "../core/ports";
import type { DriftStore } from "../core/drift";
import type { TargetRef } from "../core/resourceIds";
import { withDrift } from "./driftView";
import { observeScaleSet, type ScaleSetView } from "./observedState";

export interface ViewDeps {
  declarations: { listForTarget(ref: TargetRef): Promise<StoredDeclaration[]> };
  cache: { readonly enabled: boolean; readPartition(ref: TargetRef): Promise<CachedPartition> };
  now: () => number;
  cacheTtlMs: number;
  /** The most recent drift of each declaration (absent: none shown). */
  drifts?: Pick<DriftStore, "listForTarget"> | undefined;
}

/** Two partition queries (declarations, cache) and no ARM call: cheap enough to answer on every request. */
export async function loadScaleSetView(ref: TargetRef, deps: ViewDeps): Promise<ScaleSetView> {
  const [declarations, partition, drifts] = await Promise.all([
    deps.declarations.listForTarget(ref),
    deps.cache.readPartition(ref),
    deps.drifts?.listForTarget(ref) ?? Promise.resolve(undefined),
  ]);
  const view = observeScaleSet(ref.id, declarations, partition, {
    now: deps.now(),
    ttlMs: deps.cacheTtlMs,
    cacheEnabled: deps.cache.enabled,
  });
  return drifts ? withDrift(view, drifts) : view;
}
