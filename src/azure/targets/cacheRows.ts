import type { CachedEntry } from "../../core/ports";
import { CLOCK_SKEW_MS } from "../../core/control";
import { CacheRowMac, MAC_COLUMN, type MacFields } from "../cacheRowMac";
import { decodeModel, encodeModel, MAX_CHUNKS } from "../modelCodec";

/**
 * A cache row: what ARM last answered for one resource (model and ETag), when, and whether an event or our own
 * instance writes have made it stale since. Each row carries an HMAC over what a write may be built from (see
 * cacheRowMac.ts): a row without a valid one, with a model that does not inflate, or read "in the future" (a
 * planted readAt would keep it fresh for ever) is a miss, re-read from ARM.
 */

export type CacheRowKind = "scaleSet" | "instance" | "nic" | "vm";

export interface CacheEntity {
  partitionKey: string;
  rowKey: string;
  kind: CacheRowKind;
  resourceId: string;
  armEtag: string;
  readAt: number;
  stale: boolean;
  staleReason: string;
  staleAt: number;
  /** Last time poolsync itself read or wrote this row's resource for its target: the idle-eviction clock. */
  touchedAt: number;
  /** Instance rows: the scale set ETag read before this instance was ("" when none vouches for it). */
  listedUnder: string;
  [column: string]: unknown;
}

/** What the MAC covers, as a row holds it (the chunks bounded, so a planted count costs nothing). */
function macFieldsOf(row: Record<string, unknown>): MacFields {
  const count = Math.min(Math.max(0, Math.trunc(Number(row["modelChunks"] ?? 0)) || 0), MAX_CHUNKS);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const c = row[`model_${i}`];
    if (c instanceof Uint8Array) chunks.push(c);
  }
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    partitionKey: text(row["partitionKey"]),
    rowKey: text(row["rowKey"]),
    resourceId: text(row["resourceId"]),
    armEtag: text(row["armEtag"]),
    listedUnder: text(row["listedUnder"]),
    model: text(row["model"]),
    chunks,
  };
}

/** Told of a row whose model cannot be used (it is then a miss): worth a look, never an error. */
export type UnreadableRow = (row: { partitionKey: string; rowKey: string; resourceId: string }, reason: string) => void;

/** A stored row as the reconcile sees it. */
export function decodeCacheRow<M>(
  row: Record<string, unknown> & { etag: string },
  mac: CacheRowMac,
  now: number,
  unreadable?: UnreadableRow,
): CachedEntry<M> {
  let model: M | undefined;
  let problem: string | undefined;
  const hasModel = Number(row["modelChunks"] ?? 0) > 0 || (typeof row["model"] === "string" && row["model"] !== "");
  // Storage content is input: a body poolsync did not store (or another key stored) is never a write's base.
  const authentic = hasModel && mac.verify(macFieldsOf(row), row[MAC_COLUMN]);
  const readAt = Number(row["readAt"] ?? 0);
  try {
    if (hasModel && !authentic) throw new Error("its MAC does not verify (not stored by this app, or changed since)");
    if (!Number.isFinite(readAt) || readAt > now + CLOCK_SKEW_MS)
      throw new Error(`its readAt ${String(row["readAt"])} is in the future`);
    model = decodeModel<M>(row);
    if (model === undefined && hasModel) problem = "a chunk of the model is missing";
  } catch (err) {
    model = undefined; // unusable → a miss, re-read from ARM
    problem = err instanceof Error ? err.message : String(err);
  }
  const partitionKey = typeof row["partitionKey"] === "string" ? row["partitionKey"] : "";
  const rowKey = typeof row["rowKey"] === "string" ? row["rowKey"] : "";
  const resourceId = typeof row["resourceId"] === "string" ? row["resourceId"] : "";
  if (problem !== undefined) unreadable?.({ partitionKey, rowKey, resourceId }, problem);
  const staleReason = typeof row["staleReason"] === "string" ? row["staleReason"] : "";
  return {
    model,
    readAt: Number.isFinite(readAt) ? readAt : 0,
    stale: row["stale"] === true,
    staleReason: staleReason || undefined,
    ourClientRequestId: undefined,
    pendingClientRequestId: undefined,
    rowEtag: row.etag,
    ...(typeof row["listedUnder"] === "string" && row["listedUnder"] && authentic
      ? { listedUnder: row["listedUnder"] }
      : {}),
  };
}

/** The entity that stores what ARM answered for a resource, signed. Throws ModelTooLargeError past an entity's size. */
export function cacheEntity(
  keys: { partitionKey: string; rowKey: string },
  kind: CacheRowKind,
  resourceId: string,
  armEtag: string,
  model: unknown,
  now: number,
  mac: CacheRowMac,
  opts: { listedUnder?: string; touch?: boolean } = {},
): Record<string, unknown> {
  const entity: Record<string, unknown> = {
    ...keys,
    kind,
    resourceId,
    armEtag,
    ...encodeModel(model),
    readAt: now,
    stale: false,
    staleReason: "",
    staleAt: 0,
    listedUnder: opts.listedUnder ?? "",
    ...(opts.touch === false ? {} : { touchedAt: now }),
  };
  return { ...entity, [MAC_COLUMN]: mac.sign(macFieldsOf(entity)) };
}

/** The columns that mark a row stale (merged over it: the model stays, unusable until re-read). */
export function staleColumns(reason: string, now: number): Record<string, unknown> {
  return { stale: true, staleReason: reason.slice(0, 1_024), staleAt: now };
}
