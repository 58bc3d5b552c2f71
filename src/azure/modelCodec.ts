import { gunzipSync, gzipSync } from "node:zlib";

/**
 * Stores a JSON model in table properties: as one string when it fits, else gzip split over binary properties.
 * Never truncated: a model too large for an entity is refused, and the caller goes uncached for it.
 * Azurite does not enforce the 1 MiB entity limit, so it is enforced here.
 */

export const MAX_STRING_CHARS = 32 * 1024; // 64 KiB of UTF-16
export const MAX_BINARY_BYTES = 64 * 1024;
export const MAX_ENTITY_BYTES = 1024 * 1024;
/** The most chunks a stored model can have; a row claiming more is torn or planted. */
export const MAX_CHUNKS = Math.ceil(MAX_ENTITY_BYTES / MAX_BINARY_BYTES);
/** The largest model JSON poolsync stores or inflates: a few hundred KiB of gzip must not expand to GiBs. */
export const MAX_MODEL_JSON_BYTES = 16 * 1024 * 1024;
// Head-room for the entity's other properties (IDs, ETags, reasons) and per-property overhead.
const RESERVED_BYTES = 16 * 1024;

export class ModelTooLargeError extends Error {
  override name = "ModelTooLargeError";
}

export type EncodedModel = Record<string, string | Uint8Array | number>;

export function encodeModel(model: unknown): EncodedModel {
  const json = JSON.stringify(model);
  if (json.length <= MAX_STRING_CHARS) return { model: json, modelChunks: 0 };
  const bytes = Buffer.from(json, "utf8");
  if (bytes.length > MAX_MODEL_JSON_BYTES)
    throw new ModelTooLargeError(`model is ${bytes.length} bytes of JSON, over ${MAX_MODEL_JSON_BYTES}`);
  const zipped = gzipSync(bytes);
  if (zipped.length > MAX_ENTITY_BYTES - RESERVED_BYTES) {
    throw new ModelTooLargeError(`model is ${zipped.length} bytes compressed, over what one table entity holds`);
  }
  const out: EncodedModel = { model: "", modelChunks: Math.ceil(zipped.length / MAX_BINARY_BYTES) };
  for (let i = 0; i * MAX_BINARY_BYTES < zipped.length; i++) {
    out[`model_${i}`] = new Uint8Array(zipped.subarray(i * MAX_BINARY_BYTES, (i + 1) * MAX_BINARY_BYTES));
  }
  return out;
}

export function decodeModel<T>(entity: Record<string, unknown>): T | undefined {
  const chunks = Number(entity.modelChunks ?? 0);
  if (!Number.isInteger(chunks) || chunks < 0 || chunks > MAX_CHUNKS)
    throw new Error(`modelChunks ${String(entity.modelChunks)} is not 0..${MAX_CHUNKS}`);
  if (chunks === 0) {
    const json = entity.model;
    return typeof json === "string" && json !== "" ? (JSON.parse(json) as T) : undefined;
  }
  const parts: Buffer[] = [];
  for (let i = 0; i < chunks; i++) {
    const part = entity[`model_${i}`];
    if (!(part instanceof Uint8Array)) return undefined; // a torn row reads as a miss, never as half a model
    parts.push(Buffer.from(part));
  }
  // Throws (RangeError) past the bound instead of inflating whatever the chunks expand to.
  return JSON.parse(gunzipSync(Buffer.concat(parts), { maxOutputLength: MAX_MODEL_JSON_BYTES }).toString("utf8")) as T;
}
