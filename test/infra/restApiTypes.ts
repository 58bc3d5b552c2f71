import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./armSchema";
import type { ArmResource } from "./templateChecks";

/**
 * The REST API specification's resource bodies, as Azure/bicep-types-az generates them from
 * Azure/azure-rest-api-specs (infra/rest-api-types/README.md): the types Bicep itself checks a property against. The
 * ARM template schemas (infra/schemas) allow any extra property, so a property an api-version does not have is caught
 * here and only here.
 */

export const REST_API_TYPES_DIR = join(REPO_ROOT, "infra", "rest-api-types");

interface Ref {
  $ref: string;
}
interface Property {
  type: Ref;
  flags: number;
}
type BicepType =
  | { $type: "ResourceType"; name: string; body: Ref }
  | { $type: "ObjectType"; name: string; properties: Record<string, Property>; additionalProperties?: Ref }
  | {
      $type: "DiscriminatedObjectType";
      name: string;
      discriminator: string;
      baseProperties: Record<string, Property>;
      elements: Record<string, Ref>;
    }
  | { $type: "ArrayType"; itemType: Ref }
  | { $type: "UnionType"; elements: Ref[] }
  | { $type: "StringLiteralType"; value: string }
  | { $type: "StringType" | "IntegerType" | "BooleanType" | "AnyType" };

/** bicep-types' property flags (bicep-types/src/bicep-types/src/types.ts). */
const READ_ONLY = 2;

interface TypeFile {
  file: string;
  types: BicepType[];
}

function typesFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return typesFiles(full);
    return name === "types.json" ? [full] : [];
  });
}

/** Every resource type@api-version in the vendored files, lower-cased, with the file that defines it. */
export function loadRestApiTypes(dir: string = REST_API_TYPES_DIR): Map<string, { file: TypeFile; body: BicepType }> {
  const out = new Map<string, { file: TypeFile; body: BicepType }>();
  for (const path of typesFiles(dir)) {
    const file: TypeFile = { file: path, types: JSON.parse(readFileSync(path, "utf8")) as BicepType[] };
    for (const t of file.types)
      if (t.$type === "ResourceType") out.set(t.name.toLowerCase(), { file, body: deref(file, t.body) });
  }
  return out;
}

function deref(file: TypeFile, ref: Ref): BicepType {
  const t = file.types[Number(ref.$ref.slice(2))];
  if (!t) throw new Error(`${file.file}: no type at ${ref.$ref}`);
  return t;
}

/** An ARM expression stands for a value known only at deployment: its shape is ARM's to check, not ours. */
const isExpression = (v: unknown) => typeof v === "string" && v.startsWith("[") && !v.startsWith("[[");

/** Keys of a template resource that belong to the template language, not to the resource's body. */
const TEMPLATE_KEYS = new Set([
  "type",
  "apiVersion",
  "condition",
  "dependsOn",
  "copy",
  "comments",
  "scope",
  "resources",
]);

function check(file: TypeFile, type: BicepType, value: unknown, path: string, leafName: string): string[] {
  if (isExpression(value)) return [];
  switch (type.$type) {
    case "AnyType":
      return [];
    case "StringType":
      return typeof value === "string" ? [] : [`${path}: expected a string, found ${JSON.stringify(value)}`];
    case "IntegerType":
      return Number.isInteger(value) ? [] : [`${path}: expected an integer, found ${JSON.stringify(value)}`];
    case "BooleanType":
      return typeof value === "boolean" ? [] : [`${path}: expected true or false, found ${JSON.stringify(value)}`];
    case "StringLiteralType":
      return typeof value === "string" && value.toLowerCase() === type.value.toLowerCase()
        ? []
        : [`${path}: expected "${type.value}", found ${JSON.stringify(value)}`];
    case "UnionType": {
      const tries = type.elements.map((e) => check(file, deref(file, e), value, path, leafName));
      if (tries.some((t) => t.length === 0)) return [];
      // Only literals: say which values the api-version has.
      const literals = type.elements.map((e) => deref(file, e)).filter((t) => t.$type === "StringLiteralType");
      if (literals.length === type.elements.length)
        return [
          `${path}: ${JSON.stringify(value)} is not one of ${literals.map((l) => JSON.stringify(l.value)).join(", ")}`,
        ];
      return tries.reduce((a, b) => (a.length <= b.length ? a : b));
    }
    case "ArrayType":
      if (!Array.isArray(value)) return [`${path}: expected an array`];
      return value.flatMap((item, i) => check(file, deref(file, type.itemType), item, `${path}[${i}]`, leafName));
    case "ObjectType":
      return checkObject(file, type.name, type.properties, type.additionalProperties, value, path, leafName);
    case "DiscriminatedObjectType": {
      // sites/config and the like are told apart by their name (the discriminator): the leaf of the resource's name.
      const key =
        type.discriminator === "name"
          ? leafName
          : String((value as Record<string, unknown> | null)?.[type.discriminator] ?? "");
      const element = Object.entries(type.elements).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1];
      if (!element)
        return [`${path}: ${type.discriminator} "${key}" is not one of ${Object.keys(type.elements).join(", ")}`];
      const chosen = deref(file, element);
      if (chosen.$type !== "ObjectType") return [`${path}: unexpected ${chosen.$type} for ${key}`];
      return checkObject(
        file,
        chosen.name,
        { ...type.baseProperties, ...chosen.properties },
        chosen.additionalProperties,
        value,
        path,
        leafName,
      );
    }
    default:
      return [`${path}: ${(type as { $type: string }).$type} cannot be checked`];
  }
}

function checkObject(
  file: TypeFile,
  typeName: string,
  properties: Record<string, Property>,
  additional: Ref | undefined,
  value: unknown,
  path: string,
  leafName: string,
): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return [`${path}: expected an object (${typeName})`];
  const problems: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const here = `${path}.${key}`;
    const declared = Object.entries(properties).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1];
    if (declared) {
      if (declared.flags & READ_ONLY) problems.push(`${here}: read-only in ${typeName} (set by Azure, not by us)`);
      else problems.push(...check(file, deref(file, declared.type), v, here, leafName));
    } else if (additional) {
      problems.push(...check(file, deref(file, additional), v, here, leafName));
    } else {
      problems.push(
        `${here}: ${typeName} has no property "${key}" at this api-version (it has: ${Object.keys(properties)
          .filter((k) => !(properties[k]!.flags & READ_ONLY))
          .join(", ")})`,
      );
    }
  }
  return problems;
}

/** The leaf of a resource name: the literal after the last "/" or the last quoted argument of a format(). */
function leafOf(name: string): string {
  if (!isExpression(name)) return name.split("/").pop() ?? name;
  return /'([^'/]*)'\)\]$/.exec(name)?.[1] ?? "";
}

/**
 * Problems of one template resource (and its nested child resources) against the REST API specification: its
 * type@api-version must exist and every property it sets must exist, be writable and have the right shape there.
 */
export function restApiProblems(
  types: ReturnType<typeof loadRestApiTypes>,
  resource: ArmResource,
  parentType?: string,
): string[] {
  const type = parentType ? `${parentType}/${resource.type}` : resource.type;
  const key = `${type}@${resource.apiVersion}`;
  const where = `${key} ${resource.name}`;
  const found = types.get(key.toLowerCase());
  const problems: string[] = [];
  if (!found) problems.push(`${where}: no such resource type and api-version in the REST API specification`);
  else {
    const body = Object.fromEntries(Object.entries(resource).filter(([k]) => !TEMPLATE_KEYS.has(k)));
    problems.push(...check(found.file, found.body, body, where, leafOf(resource.name)));
  }
  for (const child of (resource.resources as ArmResource[] | undefined) ?? [])
    problems.push(...restApiProblems(types, child, type));
  return problems;
}
