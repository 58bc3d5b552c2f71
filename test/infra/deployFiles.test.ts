/* eslint-disable @typescript-eslint/no-explicit-any -- these tests walk untyped template JSON */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { ValidateFunction } from "ajv";
import { REPO_ROOT, describeErrors } from "./armSchema";
import { compileAzureYamlSchema, compileGithubWorkflowSchema, compileHostJsonSchema } from "./deploySchemas";
import { readJson, type ArmTemplate } from "./templateChecks";
import { ROLES } from "../../src/intake/principal";

/**
 * azure.yaml, the GitHub Actions workflow and host.json against their published schemas; main.bicep against main.json.
 */

const text = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");
const text_ = text;
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

  it("stays a thin wrapper: the resource group, main.json and access.json, and nothing of its own to check", () => {
    expect([...bicep.matchAll(/^resource (\w+) '([^']+)'/gm)].map((m) => m[2])).toEqual([
      "Microsoft.Resources/resourceGroups@2024-03-01",
    ]);
    expect([...bicep.matchAll(/^module \w+ '([^']+)'/gm)].map((m) => m[1])).toEqual(["main.json", "access.json"]);
    expect(bicep).not.toMatch(/^(extension|import|using) /m);
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
  type Step = { name?: string; uses?: string; run?: string; with?: Record<string, unknown> };
  const jobs = workflow.jobs as Record<string, { needs?: string; permissions?: Record<string, string>; steps: Step[] }>;
  const steps = jobs.deploy!.steps;

  it("validates against SchemaStore's github-workflow schema, which refuses a malformed workflow", () => {
    expectValid(validate, workflow);
    expect(
      validate({ ...workflow, jobs: { deploy: { ...workflow.jobs.deploy, "runs-on": undefined, steps: "x" } } }),
    ).toBe(false);
  });

  it("runs npm ci && npm test in a job the deploy job needs", () => {
    expect(jobs.deploy?.needs).toBe("test");
    expect(jobs.test?.steps.some((s) => s.run === "npm ci && npm test")).toBe(true);
  });

  it("pins every action by a full commit SHA, with the tag it is beside it", () => {
    const text = text_(".github/workflows/deploy.yml");
    const uses = [...text.matchAll(/uses: (\S+)@(\S+)(.*)$/gm)];
    expect(uses.length).toBeGreaterThanOrEqual(8);
    for (const [, action, ref, comment] of uses) {
      expect(ref, action).toMatch(/^[0-9a-f]{40}$/);
      expect(comment, action).toMatch(/ # v\d+\.\d+\.\d+$/);
    }
  });

  it("only the deploy job may ask for an OIDC token, and no install script runs there", () => {
    expect(workflow.permissions).toEqual({ contents: "read" });
    expect(jobs.test?.permissions).toBeUndefined();
    expect(jobs.deploy?.permissions).toEqual({ "id-token": "write", contents: "read" });
    const installs = steps.filter((s) => /\bnpm (ci|install|i)\b/.test(s.run ?? ""));
    expect(installs.length).toBeGreaterThan(0);
    for (const s of installs) expect(s.run, s.name).toMatch(/npm ci --ignore-scripts/);
  });

  it("keys the npm cache on the lockfile, not on the commit", () => {
    for (const job of Object.values(jobs)) {
      const cache = job.steps.find((s) => s.uses?.startsWith("actions/cache@"));
      expect(cache?.with?.key).toBe("npm-${{ runner.os }}-${{ hashFiles('package-lock.json') }}");
    }
  });

  it("signs in with OIDC (no secret) as the deploy identity, and publishes npm run package's zip with sku flexconsumption", () => {
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

  it("asks for four repository variables, the ones that cannot be derived; the rest comes from azd's deployment", () => {
    const vars = [...new Set([...JSON.stringify(workflow).matchAll(/vars\.(\w+)/g)].map((m) => m[1]))].sort();
    expect(vars).toEqual([
      "AZURE_SUBSCRIPTION_ID",
      "AZURE_TENANT_ID",
      "POOLSYNC_DEPLOY_CLIENT_ID",
      "POOLSYNC_RESOURCE_GROUP",
    ]);
    for (const step of steps.filter((s) => s.run?.includes("-f infra/main.json")))
      expect(step.run, step.name).toContain('-p "@$RUNNER_TEMP/poolsync.parameters.json"');
  });

  it("turns the Event Grid subscription on in the step after the code is published", () => {
    const publish = steps.findIndex((s) => s.uses?.startsWith("Azure/functions-action@"));
    const next = steps[publish + 1];
    expect(next?.run).toContain("-f infra/main.json");
    expect(next?.run).toMatch(/subscribeEvents=true$/);
    expect(steps.slice(0, publish).some((s) => s.run?.includes("subscribeEvents=true"))).toBe(false);
  });
});

describe("scripts/deploymentParameters.mjs (the workflow's parameters from azd's deployment)", () => {
  it("turns a deployment's parameters into a parameters file, leaving out what ARM never returns (secure ones)", () => {
    const given = {
      poolsyncScopes: { type: "String", value: "/subscriptions/00000000-0000-0000-0000-0000000000aa" },
      vnetEnabled: { type: "Bool", value: true },
      alwaysReady: { type: "Array", value: [] },
      poolsyncCacheKey: { type: "SecureString" },
    };
    const out = execFileSync(process.execPath, [join(REPO_ROOT, "scripts", "deploymentParameters.mjs")], {
      input: JSON.stringify(given),
    }).toString();
    expect(JSON.parse(out)).toEqual({
      $schema: "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
      contentVersion: "1.0.0.0",
      parameters: {
        poolsyncScopes: { value: "/subscriptions/00000000-0000-0000-0000-0000000000aa" },
        vnetEnabled: { value: true },
        alwaysReady: { value: [] },
      },
    });
  });
});

describe("the deploy identity's rights for the workflow (azd postprovision, scripts/azd-deploy-identity-roles.sh)", () => {
  const azure = yaml("azure.yaml");
  const hook = text_("scripts/azd-deploy-identity-roles.sh");

  it("runs after every provision, only when the workflow is wanted, on poolsync's resource group alone", () => {
    expect(azure.hooks.postprovision.run).toBe("sh scripts/azd-deploy-identity-roles.sh");
    expect(hook).toMatch(/azd env get-value POOLSYNC_GITHUB_OIDC_SUBJECT[\s\S]*exit 0/);
    expect(hook).toContain(
      'scope="/subscriptions/$(azd env get-value AZURE_SUBSCRIPTION_ID)/resourceGroups/$(azd env get-value AZURE_RESOURCE_GROUP)"',
    );
    expect(text_("infra/main.bicep")).toMatch(/^output POOLSYNC_DEPLOY_CLIENT_ID string = /m);
  });

  it("may assign exactly the roles main.json assigns: the condition's list is main.json's variables.roles", () => {
    const listed = (/^ROLES="([^"]+)"$/m.exec(hook)?.[1] ?? "").split(/,\s*/).sort();
    expect(listed).toEqual(Object.values(main.variables?.roles as Record<string, string>).sort());
    expect(hook).toContain('--condition "$condition" --condition-version 2.0');
    expect(hook.match(/GuidEquals \{\$ROLES\}/g)).toHaveLength(2);
  });
});

describe("the app registration (azd preprovision, scripts/azd-app-registration.sh)", () => {
  const azure = yaml("azure.yaml");
  const hook = text_("scripts/azd-app-registration.sh");
  const roles = JSON.parse(text_("infra/app-roles.json")) as { id: string; value: string; isEnabled: boolean }[];

  it("runs before provisioning and gives the template its client ID", () => {
    expect(azure.hooks.preprovision.run).toBe("sh scripts/azd-app-registration.sh");
    expect(hook).toContain('azd env set POOLSYNC_AUTH_CLIENT_ID "$app_id"');
    const params = readJson<{ parameters: Record<string, { value: string }> }>("main.parameters.json").parameters;
    expect(params.authClientId?.value).toBe("${POOLSYNC_AUTH_CLIENT_ID}");
  });

  it("defines exactly the roles the API checks, with fixed ids, and the Application ID URI the template accepts", () => {
    expect(roles.map((r) => r.value).sort()).toEqual([ROLES.declare, ROLES.read].sort());
    for (const r of roles)
      expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(roles.map((r) => r.id)).size).toBe(roles.length);
    expect(hook).toContain("--app-roles @infra/app-roles.json");
    expect(hook).toContain('--identifier-uris "api://$app_id"');
    expect(JSON.stringify(main)).toContain("[format('api://{0}', parameters('authClientId'))]");
  });

  it("is made once per environment: an existing client ID or registration is reused", () => {
    expect(hook.indexOf("azd env get-value POOLSYNC_AUTH_CLIENT_ID")).toBeLessThan(hook.indexOf("az ad app create"));
    expect(hook).toMatch(/az ad app list --filter "displayName eq '\$name'"/);
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
