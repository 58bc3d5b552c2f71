import { odata } from "@azure/data-tables";
import type { GroupRow, ResourceGroupScope } from "../../core/ports";
import { decodeKey, encodeKey } from "../../core/tableKeys";
import { statusOf } from "../tableErrors";
import { CONTROL_COLUMN, controlOf } from "./controlRow";
import { CONTROL_ROW, MODEL_ROW } from "./rowKeys";
import type { TargetStore } from "./targetStore";

/**
 * The scale set model rows of one resource group, small columns only, with whether a pass holds each one's lease: the
 * partitions of a group's scale sets share its key prefix, so one range query answers them (a LIST of the group then
 * refreshes several at once).
 */
export async function listGroupModelRows(store: TargetStore, scope: ResourceGroupScope): Promise<GroupRow[]> {
  const from = encodeKey(
    `/subscriptions/${scope.subscriptionId}/resourcegroups/${scope.resourceGroup}/providers/microsoft.compute/virtualmachinescalesets/`.toLowerCase(),
  );
  // The prefix ends in "%2F"; the next string after every key that starts with it ends in "%2G".
  const to = `${from.slice(0, -1)}${String.fromCharCode(from.charCodeAt(from.length - 1) + 1)}`;
  const models = new Map<string, GroupRow>();
  const leased = new Set<string>();
  const now = store.now();
  try {
    for await (const row of store.table.listEntities<Record<string, unknown>>({
      queryOptions: {
        filter: odata`PartitionKey ge ${from} and PartitionKey lt ${to} and (RowKey eq ${MODEL_ROW} or RowKey eq ${CONTROL_ROW})`,
        select: ["PartitionKey", "RowKey", "stale", "staleAt", "readAt", CONTROL_COLUMN],
      },
    })) {
      const key = decodeKey(row.partitionKey ?? "");
      if (row.rowKey === CONTROL_ROW) {
        const { lease } = controlOf(row, now, store.bounds, () => ({ present: 0, absent: 0, byCaller: {} })).state;
        if (lease.holder !== "" && lease.expiresAt > now) leased.add(key);
        continue;
      }
      models.set(key, {
        scaleSetKey: key,
        stale: row["stale"] === true,
        staleAt: Number(row["staleAt"] ?? 0) || 0,
        readAt: Number(row["readAt"] ?? 0) || 0,
        rowEtag: row.etag ?? "",
        writing: false,
      });
    }
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
  }
  return [...models.values()].map((r) => ({ ...r, writing: leased.has(r.scaleSetKey) }));
}
