import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2019 from "ajv/dist/2019";
import Ajv7 from "ajv";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";
import { REPO_ROOT } from "./armSchema";

/**
 * The published JSON schemas of azure.yaml (Azure/azure-dev), GitHub Actions workflows and Functions' host.json
 * (SchemaStore), vendored in infra/schemas-deploy (its README.md says from where and under which licence).
 */

export const DEPLOY_SCHEMAS_DIR = join(REPO_ROOT, "infra", "schemas-deploy");

const schema = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(DEPLOY_SCHEMAS_DIR, file), "utf8")) as Record<string, unknown>;

/**
 * azure.yaml's schema (draft 2019-09). Its `$ref`s to azd extensions' own schemas (AI agents and the like) are not
 * vendored: each stands as `{}`.
 */
export function compileAzureYamlSchema(): ValidateFunction {
  const root = schema("azure.yaml.json");
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  addFormats(ajv);
  const external = new Set([...JSON.stringify(root).matchAll(/"\$ref":"(https:[^"#]+)/g)].map((m) => m[1] as string));
  for (const id of external) ajv.addSchema({}, id);
  return ajv.compile(root);
}

function compileDraft7(file: string): ValidateFunction {
  const ajv = new Ajv7({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(schema(file));
}

export const compileGithubWorkflowSchema = (): ValidateFunction => compileDraft7("github-workflow.json");
export const compileHostJsonSchema = (): ValidateFunction => compileDraft7("host.json");
