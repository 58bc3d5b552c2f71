import type { InstanceRef, ScaleSetRef } from "../core/resourceIds";
import { encodeKey } from "../core/tableKeys";

/**
 * Where a scale set's rows live in the cache table: its model cache is a partition of its own (the encoded
 * scale set key, starting with "%2F"); the bookkeeping tables keep one row per scale set, keyed the same way,
 * in partitions named "~…" that sort after every scale set's.
 */

export const SCALE_SET_ROW = "vmss";
export const instanceRow = (instanceId: string) => `vm-${instanceId}`;

export const cachePartition = (scaleSet: ScaleSetRef) => encodeKey(scaleSet.key);

/** The cache row of a scale set model or of one instance: [PartitionKey, RowKey]. */
export function cacheRowKeys(ref: ScaleSetRef | InstanceRef): [string, string] {
  return ref.kind === "scaleSet" ? [cachePartition(ref), SCALE_SET_ROW] : [cachePartition(ref.scaleSet), instanceRow(ref.instanceId)];
}
