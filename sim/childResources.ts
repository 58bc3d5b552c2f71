// Child resources written inside their parent (a load balancer's frontends, rules and pools; a gateway's listeners and
// pools): stored as the client sent them, rendered as NRP answers them, each with its ID under the parent, the
// parent's ETag, its type and a provisioning state.
import { badRequest, type ArmError } from "./errors";
import { isJsonObject, type Json, type JsonObject } from "./json";
import { withoutReadOnly, type ReadOnlyPath } from "./merge";

const CHILD_READ_ONLY: readonly ReadOnlyPath[] = [["id"], ["etag"], ["type"], ["properties", "provisioningState"]];

/** A collection as stored: objects with a name, read-only fields dropped; a bad item is refused naming the field. */
export function storedChildren(
  items: Json | undefined,
  field: string,
  readOnly: readonly ReadOnlyPath[] = [],
): JsonObject[] | ArmError {
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) return badRequest("InvalidRequestFormat", `${field} must be an array.`);
  const out: JsonObject[] = [];
  const names = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (!isJsonObject(item) || typeof item["name"] !== "string" || item["name"] === "")
      return badRequest("InvalidRequestFormat", `${field}[${i}].name is required (a non-empty string).`);
    const key = item["name"].toLowerCase();
    if (names.has(key))
      return badRequest("InvalidRequestFormat", `${field}[${i}].name "${item["name"]}" is given twice.`);
    names.add(key);
    out.push(withoutReadOnly(item, [...CHILD_READ_ONLY, ...readOnly]));
  }
  return out;
}

/** One child as NRP answers it. */
export function renderChild(
  parent: { id: string; type: string; etag: string },
  collection: string,
  item: JsonObject,
  provisioningState = "Succeeded",
  derived: JsonObject = {},
): JsonObject {
  const { name, properties, ...rest } = item;
  return {
    name: name ?? null,
    id: `${parent.id}/${collection}/${String(name)}`,
    etag: parent.etag,
    type: `${parent.type}/${collection}`,
    ...structuredClone(rest),
    properties: {
      provisioningState,
      ...(isJsonObject(properties) ? structuredClone(properties) : {}),
      ...derived,
    },
  };
}
