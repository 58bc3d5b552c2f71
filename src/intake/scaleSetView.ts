import type { StoredDeclaration } from "../core/declarations";
import type { CachedPartition, CachedVmNics, VmNicRows } from "../core/ports";
import type { DriftStore } from "../core/drift";
import type { TargetRef } from "../core/resourceIds";
import { withDrift } from "./driftView";
import { observeScaleSet, type ScaleSetView } from "./observedState";

export interface ViewDeps {
  declarations: { listForTarget(ref: TargetRef): Promise<StoredDeclaration[]> };
  cache: { readonly enabled: boolean; readPartition(ref: TargetRef): Promise<CachedPartition> } & Partial<VmNicRows>;
  now: () => number;
  cacheTtlMs: number;
  /** The most recent drift of each declaration (absent: none shown). */
  drifts?: Pick<DriftStore, "listForTarget"> | undefined;
}

/** How many of a Flexible scale set's VMs a view shows. */
export const MAX_VMS_SHOWN = 100;

/**
 * The VMs whose NICs hold the target's memberships, from the cache: a VM target's own, a Flexible scale set's (and a
 * scale set's whose model is not cached yet, which may be Flexible). A Uniform scale set has none: nothing is read.
 */
export async function cachedVmNics(
  ref: TargetRef,
  partition: CachedPartition,
  cache: Partial<VmNicRows>,
): Promise<{ vms: CachedVmNics[]; truncated: boolean } | undefined> {
  if (!cache.readVmNics) return undefined;
  const mode = partition.scaleSet?.model?.orchestrationMode;
  if (ref.kind === "scaleSet" && partition.scaleSet?.model && (mode ?? "uniform").toLowerCase() !== "flexible")
    return undefined;
  const found = await cache.readVmNics(ref, MAX_VMS_SHOWN);
  // A scale set whose model is not cached and that has no cached VM: nothing says it is Flexible.
  return ref.kind === "scaleSet" && !partition.scaleSet?.model && found.vms.length === 0 ? undefined : found;
}

/** Two partition queries (declarations, cache), a VM target's NIC rows, and no ARM call: cheap on every request. */
export async function loadScaleSetView(ref: TargetRef, deps: ViewDeps): Promise<ScaleSetView> {
  const [declarations, partition, drifts] = await Promise.all([
    deps.declarations.listForTarget(ref),
    deps.cache.readPartition(ref),
    deps.drifts?.listForTarget(ref) ?? Promise.resolve(undefined),
  ]);
  const vmNics = await cachedVmNics(ref, partition, deps.cache);
  const view = observeScaleSet(
    ref.id,
    declarations,
    partition,
    { now: deps.now(), ttlMs: deps.cacheTtlMs, cacheEnabled: deps.cache.enabled },
    vmNics,
  );
  return drifts ? withDrift(view, drifts) : view;
}
