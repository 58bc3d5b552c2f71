import { rebornInstanceIds } from "../core/incarnation";
import type { InstanceModel } from "../core/models";
import type { CachedPartition, ComputePort, Logger, ModelCache } from "../core/ports";
import { instanceRef, type ScaleSetRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";

/**
 * One LIST of a scale set's instances, stored as listed under `modelEtag` (read before the LIST, so it vouches for
 * these rows as long as ARM still answers it), and the cached rows the LIST no longer shows evicted. The reconcile
 * and the timer's refresh both read instances this way.
 */
export async function listAndStoreInstances(
  ref: ScaleSetRef,
  cached: CachedPartition,
  modelEtag: string | undefined,
  compute: Pick<ComputePort, "listInstances">,
  deps: { cache: ModelCache; log: Logger },
  /** Instances not stored as listed: the caller writes them now, which marks their rows and stores the answers. */
  writtenNext: (inst: InstanceModel) => boolean = () => false,
): Promise<InstanceModel[]> {
  const listed = await compute.listInstances(ref);
  const earlier = [...cached.instances.values()].flatMap((e) => (e.model ? [e.model] : []));
  const reborn = rebornInstanceIds(earlier, listed);
  if (reborn.length > 0)
    deps.log.warn("instance.reborn", {
      scaleSetId: ref.id,
      instanceIds: reborn,
      reason: "instance ID reused by a new VM (vmId differs from the cached row's)",
    });
  const seen = new Set(listed.map((i) => i.instanceId));
  await storeInstances(
    ref,
    cached,
    listed.filter((i) => !writtenNext(i)),
    modelEtag,
    deps.cache,
  );
  await mapLimit(
    [...cached.instances.keys()].filter((id) => !seen.has(id)),
    8,
    (id) => deps.cache.evictInstance(instanceRef(ref, id)),
  );
  return listed;
}

/** Each instance row stored as listed under `modelEtag`, conditional on the row's Table ETag as read. */
export async function storeInstances(
  ref: ScaleSetRef,
  cached: CachedPartition,
  instances: InstanceModel[],
  modelEtag: string | undefined,
  cache: ModelCache,
): Promise<void> {
  await mapLimit(instances, 8, (inst) =>
    cache
      .storeInstance(
        instanceRef(ref, inst.instanceId),
        inst,
        cached.instances.get(inst.instanceId)?.rowEtag,
        undefined,
        modelEtag,
      )
      .then(() => undefined),
  );
}
