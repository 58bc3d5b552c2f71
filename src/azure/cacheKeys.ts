import type { CachedResourceRef, ResourceGroupScope } from "../core/ports";
import type { InstanceRef, ScaleSetRef, TargetRef } from "../core/resourceIds";
import { encodeKey } from "../core/tableKeys";

/**
 * Where a scale set's rows live in the cache table: its model cache is a partition of its own (the encoded
 * scale set key, starting with "%2F"); the bookkeeping tables keep one row per scale set, keyed the same way,
 * in partitions named "~…" that sort after every scale set's.
 */

export const SCALE_SET_ROW = "vmss";
export const instanceRow = (instanceId: string) => `vm-${instanceId}`;

/** NICs and top-level VMs: one row each in a partition of their own ID, so an event naming the resource finds it. */
export const RESOURCE_ROW = { nic: "nic", vm: "vmres" } as const;
export const isResourceRow = (rowKey: string) => rowKey === RESOURCE_ROW.nic || rowKey === RESOURCE_ROW.vm;

export const cachePartition = (target: TargetRef | CachedResourceRef) => encodeKey(target.key);

/** The cache row of a scale set model, one instance, a NIC or a VM: [PartitionKey, RowKey]. */
export function cacheRowKeys(ref: ScaleSetRef | InstanceRef | CachedResourceRef): [string, string] {
  if (ref.kind === "instance") return [cachePartition(ref.scaleSet), instanceRow(ref.instanceId)];
  return [cachePartition(ref), ref.kind === "scaleSet" ? SCALE_SET_ROW : RESOURCE_ROW[ref.kind]];
}

/**
 * The partitions of every scale set of one resource group, as a range [from, to): their keys share the group's
 * prefix, so Table Storage answers them by one range scan instead of a scan of the whole table.
 */
export function groupScaleSetPartitions(scope: ResourceGroupScope): [string, string] {
  return groupPartitions(scope, "virtualmachinescalesets");
}

/** The partitions of every top-level VM of one resource group (their `vmres` rows), as a range [from, to). */
export function groupVmPartitions(scope: ResourceGroupScope): [string, string] {
  return groupPartitions(scope, "virtualmachines");
}

function groupPartitions(scope: ResourceGroupScope, type: string): [string, string] {
  const from = encodeKey(
    `/subscriptions/${scope.subscriptionId}/resourcegroups/${scope.resourceGroup}/providers/microsoft.compute/${type}/`.toLowerCase(),
  );
  // The prefix ends in "%2F"; the next string after every key that starts with it ends in "%2G".
  return [from, `${from.slice(0, -1)}${String.fromCharCode(from.charCodeAt(from.length - 1) + 1)}`];
}
