/* eslint-disable @typescript-eslint/no-explicit-any -- these tests walk untyped template JSON */
import { beforeAll, describe, expect, it } from "vitest";
import type { ValidateFunction } from "ajv-draft-04";
import { join } from "node:path";
import { ARM_SCHEMAS_DIR, REPO_ROOT, compileDeploymentTemplateSchema, describeErrors } from "./armSchema";
import { readJson, type ArmTemplate } from "./templateChecks";

// Compiled once for the file: the schema set is large (~3 s to compile, ~2 ms per validation).
let validate: ValidateFunction;
beforeAll(() => {
  validate = compileDeploymentTemplateSchema();
});

function expectValid(template: unknown): void {
  const ok = validate(template);
  expect(ok, describeErrors(validate.errors)).toBe(true);
}

function expectRefused(template: unknown): void {
  expect(validate(template)).toBe(false);
}

const clone = <T>(value: T): T => structuredClone(value);

describe("infra templates against the ARM deployment template schema (offline, infra/schemas)", () => {
  it.each(["main.json", "access.json"])("%s validates", (file) => {
    expectValid(readJson(file));
  });

  it.each(["main.json", "access.json"])(
    "every resource of %s validates on its own (so a oneOf over the whole array cannot hide one)",
    (file) => {
      const template = readJson<ArmTemplate>(file);
      for (const resource of template.resources) {
        const ok = validate({ ...template, resources: [resource] });
        expect(ok, `${resource.type} ${resource.name}:\n${describeErrors(validate.errors)}`).toBe(true);
      }
    },
  );

  it("the parameters file is a deployment parameters file", () => {
    const params = readJson<{ $schema: string; contentVersion: string; parameters: object }>("main.parameters.json");
    expect(params.$schema).toMatch(/deploymentParameters\.json#$/);
    expect(params.contentVersion).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });
});

describe("the schema check can fail", () => {
  const main = (): ArmTemplate => clone(readJson<ArmTemplate>("main.json"));

  it("refuses an api-version the schemas do not know", () => {
    const broken = main();
    const site = broken.resources.find((r) => r.type === "Microsoft.Web/sites");
    if (!site) throw new Error("main.json has no site");
    site.apiVersion = "2099-01-01";
    expectRefused(broken);
  });

  it("refuses a resource type the schemas do not know (e.g. nested deployments, hence access.json)", () => {
    const broken = main();
    broken.resources.push({
      type: "Microsoft.Resources/deployments",
      apiVersion: "2022-09-01",
      name: "nested",
      properties: { mode: "Incremental" },
    });
    expectRefused(broken);
  });

  it("refuses a bad property type at the root", () => {
    const broken = main() as unknown as Record<string, unknown>;
    broken.contentVersion = 1;
    expectRefused(broken);
  });

  it("refuses languageVersion 2.0 (symbolic-name templates)", () => {
    expectRefused({ ...main(), languageVersion: "2.0" });
  });

  it("refuses a bad property type inside a resource", () => {
    const broken = main();
    const storage = broken.resources.find((r) => r.type === "Microsoft.Storage/storageAccounts");
    if (!storage?.properties) throw new Error("main.json has no storage account");
    storage.properties.allowSharedKeyAccess = "no";
    expectRefused(broken);
  });

  it("refuses bad monitoring resources: an action group short name over 12 characters, a log alert severity as text, a metric alert without its criteria type", () => {
    const broken = (type: string, mutate: (props: Record<string, any>) => void) => {
      const t = main();
      const r = t.resources.find((x) => x.type === type);
      if (!r?.properties) throw new Error(`main.json has no ${type}`);
      mutate(r.properties);
      return { ...t, resources: [r] };
    };
    expectRefused(broken("Microsoft.Insights/actionGroups", (p) => (p.groupShortName = "poolsync-alerts")));
    expectRefused(broken("Microsoft.Insights/scheduledQueryRules", (p) => (p.severity = "high")));
    expectRefused(broken("Microsoft.Insights/metricAlerts", (p) => delete p.criteria["odata.type"]));
    expectRefused(
      broken("Microsoft.Storage/storageAccounts/managementPolicies", (p) => (p.policy.rules[0].type = "Delete")),
    );
  });

  it("says clearly where the schemas were expected when the folder is absent", () => {
    expect(() => compileDeploymentTemplateSchema("/nonexistent/arm-schemas")).toThrow(
      /ARM template schemas not found at \/nonexistent\/arm-schemas/,
    );
    expect(ARM_SCHEMAS_DIR).toBe(join(REPO_ROOT, "infra", "schemas"));
  });
});
