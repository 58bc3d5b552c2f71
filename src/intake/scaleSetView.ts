import type { StoredDeclaration } from "../core/declarations";
import type { CachedPartition } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { observeScaleSet, type ScaleSetView } from "./observedState";

export interface ViewDeps {
  declarations: { listForTarget(ref: TargetRef): Promise<StoredDeclaration[]> };
  cache: { readonly enabled: boolean; readPartition(ref: TargetRef): Promise<CachedPartition> };
  now: () => number;
  cacheTtlMs: number;
}

/** Two partition queries (declarations, cache) and no ARM call: cheap enough to answer on every request. */
export async function loadScaleSetView(ref: TargetRef, deps: ViewDeps): Promise<ScaleSetView> {
  const [declarations, partition] = await Promise.all([deps.declarations.listForTarget(ref), deps.cache.readPartition(ref)]);
  return observeScaleSet(ref.id, declarations, partition, { now: deps.now(), ttlMs: deps.cacheTtlMs, cacheEnabled: deps.cache.enabled });
}
