import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import Ajv from "ajv-draft-04";
import addFormats from "ajv-formats";
import type { ErrorObject, ValidateFunction } from "ajv-draft-04";

/**
 * The offline ARM template schemas in infra/schemas (see its README.md), validated exactly as that README says:
 * ajv-draft-04 + ajv-formats, strict: false, every file registered under its origin URL, then the root compiled.
 */

export const REPO_ROOT = resolve(__dirname, "..", "..");
export const ARM_SCHEMAS_DIR = resolve(REPO_ROOT, "infra", "schemas");
const ORIGIN = "https://schema.management.azure.com/schemas/";
const ROOT = `${ORIGIN}2019-04-01/deploymentTemplate.json`;

function jsonFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return jsonFiles(full);
    return name.endsWith(".json") ? [full] : [];
  });
}

/** Compiles the deployment template schema; the compiled function is big, so compile it once per test file. */
export function compileDeploymentTemplateSchema(dir: string = ARM_SCHEMAS_DIR): ValidateFunction {
  if (!existsSync(join(dir, "2019-04-01", "deploymentTemplate.json"))) {
    throw new Error(
      `ARM template schemas not found at ${dir} (expected infra/schemas in the repository ${REPO_ROOT}, ` +
        "with 2019-04-01/deploymentTemplate.json in it). The infra tests validate infra/*.json offline against that folder.",
    );
  }
  const ajv = new Ajv({ strict: false, allErrors: false });
  addFormats(ajv);
  for (const file of jsonFiles(dir)) {
    const key = ORIGIN + relative(dir, file).split(sep).join("/");
    ajv.addSchema(JSON.parse(readFileSync(file, "utf8")) as object, key);
  }
  return ajv.getSchema(ROOT) ?? ajv.compile({ $ref: ROOT });
}

/** A short, readable digest of ajv's (long, nested-oneOf) errors. */
export function describeErrors(errors: ErrorObject[] | null | undefined, max = 8): string {
  if (!errors || errors.length === 0) return "(no errors)";
  const lines = errors.slice(0, max).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} (${e.schemaPath})`);
  if (errors.length > max) lines.push(`... and ${errors.length - max} more`);
  return lines.join("\n");
}
