import type { InstanceModel } from "./models";

/**
 * Which VM an instance body describes. Azure reuses the IDs of deleted instances, and a new instance starts its ETag
 * at "1" again, so an instance ID with an ETag does not name one VM: a cached body of the dead instance 3 can carry
 * the very ETag the new instance 3 has, and a write computed from it would pass If-Match. `properties.vmId` (a new
 * GUID for each VM, on every GET and LIST) does name it.
 */

/** Both bodies name the same VM: their vmIds are known and equal. */
export function sameIncarnation(a: Pick<InstanceModel, "vmId">, b: Pick<InstanceModel, "vmId">): boolean {
  return a.vmId !== undefined && a.vmId === b.vmId;
}

/** Instance IDs whose earlier body is of another VM than the live one (both vmIds known and different). */
export function rebornInstanceIds(earlier: readonly InstanceModel[], live: readonly InstanceModel[]): string[] {
  const liveById = new Map(live.map((i) => [i.instanceId, i] as const));
  return earlier
    .filter((e) => {
      const l = liveById.get(e.instanceId);
      return l !== undefined && e.vmId !== undefined && l.vmId !== undefined && !sameIncarnation(e, l);
    })
    .map((e) => e.instanceId);
}
