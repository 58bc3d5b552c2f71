import { randomUUID } from "node:crypto";
import type { Declaration } from "../../core/declarations";
import type { HistoryEntry } from "../../core/history";
import { historyRowKey } from "./rowKeys";

/** One history entry as a row of its target's partition (its time in the key: newest first). */
export function historyEntity(
  partitionKey: string,
  entry: HistoryEntry,
  now = Date.now(),
): Record<string, unknown> & {
  rowKey: string;
} {
  const at = Date.parse(entry.at);
  return {
    partitionKey,
    rowKey: historyRowKey(Number.isNaN(at) ? now : at, randomUUID().slice(0, 8)),
    entry: JSON.stringify(entry).slice(0, 30_000),
  };
}

/** A declaration as its target's history records it, at the time it was stored. */
export function declarationHistory(d: Declaration, at: string): HistoryEntry {
  return {
    at,
    kind: "declaration",
    backendPoolId: d.backendPoolId,
    ipConfiguration: d.ipConfiguration,
    state: d.state,
    by: { id: d.declaredBy.id, name: d.declaredBy.name, via: d.declaredBy.via },
    requestId: d.requestId,
  };
}
