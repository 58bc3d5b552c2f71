// Every request body the simulator receives and every answer it gives, held against Azure's own OpenAPI definitions
// (azure-rest-api-specs), when the simulator is given them (`specConformance`): each exchange is matched to an
// operation by method and path, its JSON checked against the operation's schemas, and what does not fit is recorded
// (never refused: the simulator answers as before, a test asserts the record is empty). The definitions come from
// the caller (the tests load the vendored subset under test/fixtures/azure/openapi), so the simulator reads no files.
import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { isJsonObject, type Json, type JsonObject } from "./json";

/** One operation of the specification's paths: its body's and its answers' schemas (`<document uri>#/definitions/X`). */
export interface SpecOperation {
  method: string;
  /** A path template as the specification writes it, `{name}` for each parameter. */
  path: string;
  request?: string;
  /** By status code, and `default` for every other (errors). */
  responses: Record<string, string>;
}

export interface SpecConformanceOptions {
  /** OpenAPI 2.0 documents, each under the URI its relative `$ref`s resolve against. */
  documents: { uri: string; document: JsonObject }[];
  operations: SpecOperation[];
}

export interface SpecViolation {
  method: string;
  path: string;
  apiVersion: string;
  /** The request body, or the answer with its status. */
  part: "request" | `response ${number}`;
  schema: string;
  errors: string[];
}

/** What the records hold: what did not fit, which exchanges no operation covers, and how many were checked. */
export interface SpecRecord {
  violations: SpecViolation[];
  uncovered: string[];
  checked: number;
  /** `$ref`s whose definitions are not in the documents given: accepted as any value (listed, so the gap is seen). */
  openDefinitions: string[];
}

interface CompiledOperation {
  method: string;
  pattern: RegExp;
  path: string;
  request?: ValidateFunction;
  requestRef?: string;
  responses: Map<string, { ref: string; validate: ValidateFunction }>;
}

export class SpecConformance {
  readonly #operations: CompiledOperation[];
  readonly #record: SpecRecord;

  constructor(options: SpecConformanceOptions) {
    const documents = options.documents.map((d) => ({
      uri: d.uri,
      document: azureSemantics(structuredClone(d.document)),
    }));
    const operationRefs = options.operations.flatMap((op) => [
      ...(op.request ? [op.request] : []),
      ...Object.values(op.responses),
    ]);
    const openDefinitions = fillMissingDefinitions(documents, operationRefs);
    const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    // OpenAPI's and Azure's formats that JSON Schema does not know: any string passes.
    for (const f of [
      "int32",
      "int64",
      "float",
      "double",
      "byte",
      "binary",
      "password",
      "arm-id",
      "duration",
      "base64url",
    ])
      ajv.addFormat(f, true);
    for (const d of documents) ajv.addSchema(d.document, d.uri);
    const compile = (ref: string): ValidateFunction => ajv.compile({ $ref: ref });
    this.#operations = options.operations.map((op) => ({
      method: op.method.toUpperCase(),
      path: op.path,
      pattern: templatePattern(op.path),
      ...(op.request ? { request: compile(op.request), requestRef: op.request } : {}),
      responses: new Map(
        Object.entries(op.responses).map(([status, ref]) => [status, { ref, validate: compile(ref) }]),
      ),
    }));
    this.#record = { violations: [], uncovered: [], checked: 0, openDefinitions };
  }

  get record(): SpecRecord {
    return this.#record;
  }

  /** Checks one exchange: the request body (if any) and the answer's body (if any). */
  check(exchange: {
    method: string;
    pathname: string;
    apiVersion: string;
    requestText: string;
    status: number;
    responseBody: Json | undefined;
  }): void {
    const method = exchange.method.toUpperCase();
    const op = this.#operations.find((o) => o.method === method && o.pattern.test(exchange.pathname));
    if (!op) {
      const key = `${method} ${templateOf(exchange.pathname)}`;
      if (!this.#record.uncovered.includes(key)) this.#record.uncovered.push(key);
      return;
    }
    this.#record.checked++;
    const base = { method, path: exchange.pathname, apiVersion: exchange.apiVersion };
    if (op.request && op.requestRef && exchange.requestText.trim() !== "") {
      let body: unknown;
      try {
        body = JSON.parse(exchange.requestText);
      } catch {
        body = undefined; // not JSON: the simulator answers that itself (400 InvalidRequestContent)
      }
      if (body !== undefined && !op.request(body))
        this.#record.violations.push({
          ...base,
          part: "request",
          schema: op.requestRef,
          errors: describe(op.request.errors),
        });
    }
    if (exchange.responseBody === undefined) return;
    const answer = op.responses.get(String(exchange.status)) ?? op.responses.get("default");
    if (!answer) {
      this.#record.violations.push({
        ...base,
        part: `response ${exchange.status}`,
        schema: "(none)",
        errors: [`the specification gives no answer with status ${exchange.status} and no default`],
      });
      return;
    }
    if (!answer.validate(exchange.responseBody))
      this.#record.violations.push({
        ...base,
        part: `response ${exchange.status}`,
        schema: answer.ref,
        errors: describe(answer.validate.errors),
      });
  }
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
}

/** `{name}` matches one path segment; paths and names compare case-insensitively, as ARM's do. */
function templatePattern(template: string): RegExp {
  const escaped = template
    .split(/\{[^}]+\}/)
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^/]+");
  return new RegExp(`^${escaped}/?$`, "i");
}

/** A path with its names replaced, for the list of uncovered exchanges. */
function templateOf(pathname: string): string {
  const segs = pathname.split("/");
  return segs.map((s, i) => (i > 0 && i % 2 === 0 && !/^providers$/i.test(segs[i - 1] ?? "") ? "{}" : s)).join("/");
}

/**
 * Azure's meaning of two OpenAPI 2.0 extensions: an enum marked `modelAsString` is open (new values may come: ARM's
 * clients must accept them), and `x-nullable` admits null.
 */
function azureSemantics(node: Json): JsonObject {
  const walk = (n: Json): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!isJsonObject(n)) return;
    const xe = n["x-ms-enum"];
    if (isJsonObject(xe) && xe["modelAsString"] === true) delete n["enum"];
    if (n["x-nullable"] === true && typeof n["type"] === "string") n["type"] = [n["type"], "null"];
    for (const v of Object.values(n)) walk(v);
  };
  walk(node);
  return node as JsonObject;
}

/** Adds an empty (any value) definition for every `$ref` the documents do not hold, and says which. */
function fillMissingDefinitions(documents: { uri: string; document: JsonObject }[], absoluteRefs: string[]): string[] {
  const byUri = new Map(documents.map((d) => [d.uri, d.document]));
  const open = new Set<string>();
  const refs: { from: string; ref: string }[] = [];
  const collect = (from: string, n: Json): void => {
    if (Array.isArray(n)) return n.forEach((x) => collect(from, x));
    if (!isJsonObject(n)) return;
    if (typeof n["$ref"] === "string") refs.push({ from, ref: n["$ref"] });
    for (const v of Object.values(n)) collect(from, v);
  };
  for (const d of documents) collect(d.uri, d.document);
  for (const ref of absoluteRefs) refs.push({ from: ref, ref });
  for (const { from, ref } of refs) {
    const [file, pointer] = ref.split("#");
    const uri = file ? new URL(file, from).toString() : from;
    const name = /^\/definitions\/(.+)$/.exec(pointer ?? "")?.[1];
    if (name === undefined) continue;
    let doc = byUri.get(uri);
    if (!doc) {
      doc = { swagger: "2.0", definitions: {} };
      byUri.set(uri, doc);
      documents.push({ uri, document: doc });
    }
    const defs = isJsonObject(doc["definitions"]) ? doc["definitions"] : (doc["definitions"] = {});
    if (defs[name] === undefined) {
      defs[name] = {};
      open.add(`${uri}#/definitions/${name}`);
    }
  }
  return [...open].sort();
}
