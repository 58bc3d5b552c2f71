/* eslint-disable @typescript-eslint/no-explicit-any -- these tests walk untyped template JSON */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { ValidateFunction } from "ajv";
import { REPO_ROOT, describeErrors } from "./armSchema";
import { compileAzureYamlSchema, compileGithubWorkflowSchema, compileHostJsonSchema } from "./deploySchemas";
import { readJson, type ArmTemplate } from "./templateChecks";

/**
 * azure.yaml, the GitHub Actions workflow and host.json against their published schemas; main.bicep against main.json.
 */

const text = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");
const yaml = (path: string) => parse(text(path)) as Record<string, any>;
const main = readJson<ArmTemplate>("main.json");

function expectValid(validate: ValidateFunction, value: unknown): void {
  expect(validate(value), describeErrors(validate.errors as never)).toBe(true);
}

describe("azure.yaml (azd up)", () => {
  let validate: ValidateFunction;
  beforeAll(() => {
    validate = compileAzureYamlSchema();
  });
  const azure = yaml("azure.yaml");

  it("validates against azd's published schema, which refuses what azd would", () => {
    expectValid(validate, azure);
    expect(validate({ ...azure, services: { api: { ...azure.services.api, host: "functions" } } })).toBe(false);
    expect(validate({ ...azure, hooks: { afterdeploy: { run: "x" } } })).toBe(false);
  });

  it("deploys the staged package of npm run package to the Function App main.bicep names, with Bicep from infra/main", () => {
    expect(azure.infra).toEqual({ provider: "bicep", path: "infra", module: "main" });
    expect(azure.services.api).toMatchObject({
      host: "function",
      language: "ts",
      dist: "dist/package",
      resourceName: "${AZURE_FUNCTION_APP_NAME}",
    });
    expect(azure.services.api.hooks.prepackage.run).toBe("npm run package");
    expect(text("infra/main.bicep")).toMatch(
      /^output AZURE_FUNCTION_APP_NAME string = app\.outputs\.functionAppName$/m,
    );
  });

  it("subscribes the events after the code is live: postdeploy provisions again with subscribeEvents on", () => {
    expect(azure.hooks.postdeploy.run).toBe("sh scripts/azd-subscribe-events.sh");
    const hook = text("scripts/azd-subscribe-events.sh");
    expect(hook).toContain("azd env set POOLSYNC_SUBSCRIBE_EVENTS true");
    expect(hook).toContain("azd provision --no-prompt");
    const params = readJson<{ parameters: Record<string, { value: string }> }>("main.parameters.json").parameters;
    expect(params.subscribeEvents?.value).toBe("${POOLSYNC_SUBSCRIBE_EVENTS=false}");
  });
});

describe("infra/main.bicep (not compiled here: the Bicep compiler cannot run on these machines)", () => {
  const bicep = text("infra/main.bicep");
  const declared = new Map([...bicep.matchAll(/^param (\w+) (\w+)/gm)].map((m) => [m[1] as string, m[2] as string]));
  const passed = /module app 'main\.json' = \{[\s\S]*?params: \{([\s\S]*?)\n {2}\}/.exec(bicep)?.[1] ?? "";
  const passedNames = [...passed.matchAll(/^\s+(\w+):/gm)].map((m) => m[1]);

  it("says so beside it", () => {
    expect(bicep).toContain("NOT COMPILED HERE: the Bicep compiler cannot run on this project's machines");
  });

  it("declares every main.json parameter with its type, and passes each one to main.json", () => {
    for (const [name, p] of Object.entries(main.parameters ?? {})) {
      // Bicep writes a securestring as @secure() on a string.
      if (p.type === "securestring")
        expect(bicep, name).toMatch(new RegExp(`@secure\\(\\)\\n(@.*\\n)*param ${name} string\\b`));
      expect(declared.get(name), name).toBe(p.type === "securestring" ? "string" : p.type);
    }
    expect([...passedNames].sort()).toEqual(Object.keys(main.parameters ?? {}).sort());
  });

  it("reads only outputs main.json has, and gives access.json the parameters it requires", () => {
    const outputs = [...new Set([...bicep.matchAll(/app\.outputs\.(\w+)/g)].map((m) => m[1] as string))];
    expect(outputs.filter((o) => !(o in (main.outputs ?? {})))).toEqual([]);
    const access = readJson<ArmTemplate>("access.json");
    const given = /module access 'access\.json'[\s\S]*?params: \{([\s\S]*?)\}/.exec(bicep)?.[1] ?? "";
    const required = Object.entries(access.parameters ?? {})
      .filter(([, p]) => p.defaultValue === undefined)
      .map(([n]) => n);
    expect([...given.matchAll(/^\s+(\w+):/gm)].map((m) => m[1]).sort()).toEqual(required.sort());
    // Bicep interpolates ${...} in every string: only the two names that mean to.
    expect([...bicep.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1])).toEqual(["environmentName", "i"]);
  });

  it("the required parameters stay required, and azd's parameters file names only parameters it declares", () => {
    for (const name of ["poolsyncScopes", "poolsyncBindings", "authClientId"])
      expect(bicep).toMatch(new RegExp(`^param ${name} string$`, "m"));
    const params = readJson<{ parameters: Record<string, unknown> }>("main.parameters.json").parameters;
    expect(Object.keys(params).filter((p) => !declared.has(p))).toEqual([]);
  });
});

describe(".github/workflows/deploy.yml", () => {
  let validate: ValidateFunction;
  beforeAll(() => {
    validate = compileGithubWorkflowSchema();
  });
  const workflow = yaml(".github/workflows/deploy.yml");
  const steps = workflow.jobs.deploy.steps as {
    name?: string;
    uses?: string;
    run?: string;
    with?: Record<string, unknown>;
  }[];

  it("validates against SchemaStore's github-workflow schema, which refuses a malformed workflow", () => {
    expectValid(validate, workflow);
    expect(
      validate({ ...workflow, jobs: { deploy: { ...workflow.jobs.deploy, "runs-on": undefined, steps: "x" } } }),
    ).toBe(false);
  });

  it("signs in with OIDC (no secret) as the deploy identity, and publishes npm run package's zip with sku flexconsumption", () => {
    expect(workflow.permissions).toEqual({ "id-token": "write", contents: "read" });
    const login = steps.find((s) => s.uses?.startsWith("azure/login@"));
    expect(login?.with).toEqual({
      "client-id": "${{ vars.POOLSYNC_DEPLOY_CLIENT_ID }}",
      "tenant-id": "${{ vars.AZURE_TENANT_ID }}",
      "subscription-id": "${{ vars.AZURE_SUBSCRIPTION_ID }}",
    });
    expect(JSON.stringify(workflow)).not.toMatch(/secrets\./);
    const publish = steps.find((s) => s.uses?.startsWith("Azure/functions-action@"));
    expect(publish?.with).toMatchObject({ package: "dist/poolsync.zip", sku: "flexconsumption" });
    expect(steps.findIndex((s) => s.run?.includes("npm run package"))).toBeLessThan(steps.indexOf(publish as never));
  });

  it("turns the Event Grid subscription on in the step after the code is published", () => {
    const publish = steps.findIndex((s) => s.uses?.startsWith("Azure/functions-action@"));
    const next = steps[publish + 1];
    expect(next?.run).toContain("-f infra/main.json");
    expect(next?.run).toMatch(/subscribeEvents=true$/);
    expect(steps.slice(0, publish).some((s) => s.run?.includes("subscribeEvents=true"))).toBe(false);
  });

  it("passes every parameter main.json requires", () => {
    const required = Object.entries(main.parameters ?? {}).filter(([, p]) => p.defaultValue === undefined);
    for (const step of steps.filter((s) => s.run?.includes("-f infra/main.json")))
      for (const [name] of required) expect(step.run, `${step.name}: ${name}`).toContain(`${name}=`);
  });
});

describe("host.json", () => {
  let validate: ValidateFunction;
  beforeAll(() => {
    validate = compileHostJsonSchema();
  });
  const host = JSON.parse(text("host.json")) as Record<string, any>;

  it("validates against SchemaStore's host.json schema, which refuses an unknown sampling setting", () => {
    expectValid(validate, host);
    const broken = structuredClone(host);
    broken.logging.applicationInsights.samplingSettings.excludedTypes = ["Trace"];
    expect(validate(broken)).toBe(false);
  });

  it("sends the host's own logs and traces the OpenTelemetry way (telemetryMode), a value the schema checks", () => {
    expect(host.telemetryMode).toBe("OpenTelemetry");
    expect(validate({ ...host, telemetryMode: "OTel" })).toBe(false);
  });

  it("never samples away a trace (the arm.write audit lines), nor a request or an exception", () => {
    const sampling = host.logging.applicationInsights.samplingSettings;
    expect(sampling.excludedTypes.split(";").sort()).toEqual(["Exception", "Request", "Trace"]);
    expect(sampling.includedTypes).toBeUndefined();
  });
});
