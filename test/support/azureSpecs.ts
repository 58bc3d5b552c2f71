import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { JsonObject, SpecConformanceOptions, SpecOperation } from "../../sim";

/**
 * Azure's OpenAPI definitions vendored under test/fixtures/azure/openapi (its README says what, from which commit,
 * and what was left out), as the simulator's `specConformance` option takes them: each `*.subset.json` under the URI
 * of the file it was taken from, so the relative `$ref`s between them resolve as in azure-rest-api-specs.
 */
const ROOT = path.resolve(__dirname, "../fixtures/azure/openapi");
/** Where relative `$ref`s resolve: the repository's layout (the commits are in the README). */
export const SPEC_BASE = "https://github.com/Azure/azure-rest-api-specs/blob/main/specification/";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : name.endsWith(".subset.json") ? [full] : [];
  });
}

export function azureSpecs(): SpecConformanceOptions {
  const specRoot = path.join(ROOT, "specification");
  const documents = files(specRoot).map((file) => ({
    uri:
      SPEC_BASE +
      path
        .relative(specRoot, file)
        .split(path.sep)
        .join("/")
        .replace(/\.subset\.json$/, ".json"),
    document: JSON.parse(readFileSync(file, "utf8")) as JsonObject,
  }));
  const { operations } = JSON.parse(readFileSync(path.join(ROOT, "operations.json"), "utf8")) as {
    operations: SpecOperation[];
  };
  const absolute = (ref: string) => SPEC_BASE + ref;
  return {
    documents,
    operations: operations.map((op) => ({
      ...op,
      ...(op.request ? { request: absolute(op.request) } : {}),
      responses: Object.fromEntries(Object.entries(op.responses).map(([s, r]) => [s, absolute(r)])),
    })),
  };
}
