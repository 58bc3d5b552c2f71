import type { StoredDeclaration } from "../core/declarations";
import type { CachedPartition } from "../core/ports";
import type { ScaleSetRef } from "../core/resourceIds";
import { observeScaleSet, type ScaleSetView } from "./observedState";

export interface ViewDeps {
  declarations: { listForScaleSet(ref: ScaleSetRef): Promise<StoredDeclaration[]> };
  cache: { readonly enabled: boolean; readPartition(ref: ScaleSetRef): Promise<CachedPartition> };
  now: () => number;
  cacheTtlMs: number;
}

/** Two partition queries (declarations, cache) and no ARM call: cheap enough to answer on every request. */
export async function loadScaleSetView(ref: ScaleSetRef, deps: ViewDeps): Promise<ScaleSetView> {
  const [declarations, partition] = await Promise.all([deps.declarations.listForScaleSet(ref), deps.cache.readPartition(ref)]);
  return observeScaleSet(ref.id, declarations, partition, { now: deps.now(), ttlMs: deps.cacheTtlMs, cacheEnabled: deps.cache.enabled });
}
