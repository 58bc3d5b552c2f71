// CRP's PUT/PATCH semantics: properties left out keep their stored value, an array that is sent replaces the stored
// array whole, read-only properties in a body are ignored. This is what makes a lost update possible without If-Match.
import { isJsonObject, type Json, type JsonObject } from "./json";

/** Returns stored ⊕ incoming: objects merge key by key, everything else (arrays, scalars, null) replaces. */
export function mergeArm(stored: JsonObject, incoming: JsonObject): JsonObject {
  const out: JsonObject = { ...stored };
  for (const [key, value] of Object.entries(incoming)) {
    const prev = out[key];
    out[key] = isJsonObject(prev) && isJsonObject(value) ? mergeArm(prev, value) : structuredClone(value);
  }
  return out;
}

/** A read-only path: `["properties", "provisioningState"]`. */
export type ReadOnlyPath = readonly string[];

/** Copy of body without the read-only paths (which the caller may have echoed back from a GET). */
export function withoutReadOnly(body: JsonObject, paths: readonly ReadOnlyPath[]): JsonObject {
  const out = structuredClone(body);
  for (const path of paths) removePath(out, path);
  return out;
}

function removePath(obj: Json, path: ReadOnlyPath): void {
  const [head, ...rest] = path;
  if (head === undefined || !isJsonObject(obj)) return;
  if (rest.length === 0) {
    delete obj[head];
    return;
  }
  const next = obj[head];
  if (next !== undefined) removePath(next, rest);
}
