/* eslint-disable @typescript-eslint/no-explicit-any -- these tests walk untyped template JSON */
import { describe, expect, it } from "vitest";
import { loadRegisteredFunctions } from "../../local/host/loadFunctions";
import { REPO_ROOT } from "./armSchema";
import { onlyResourceOfType, readJson, resourcesOfType, type ArmResource, type ArmTemplate } from "./templateChecks";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Issue 27's template part (alerts, diagnostic settings, workbook) and issue 28's Flex Consumption settings. */

const main = readJson<ArmTemplate>("main.json");
const param = (name: string) => main.parameters?.[name] as Record<string, unknown> | undefined;

/** The metric names the app emits through OpenTelemetry (issue 27's contract with the app). */
const APP_METRICS = [
  "poolsync.arm.requests",
  "poolsync.arm.request.duration",
  "poolsync.arm.precondition_failed",
  "poolsync.arm.throttled",
  "poolsync.reconcile.duration",
  "poolsync.declaration.convergence",
  "poolsync.declarations",
  "poolsync.declaration.oldest_pending_age",
  "poolsync.queue.depth",
  "poolsync.queue.poison_depth",
  "poolsync.queue.message_age",
  "poolsync.events",
  "poolsync.drift.repaired",
  "poolsync.timer.runs",
  "poolsync.timer.last_success_age",
];

const logAlerts = resourcesOfType(main, "Microsoft.Insights/scheduledQueryRules");
const metricAlerts = resourcesOfType(main, "Microsoft.Insights/metricAlerts");
const alertKey = (r: ArmResource) => /'\{0\}-([a-z0-9-]+)'/.exec(r.name)?.[1];
const criterion = (r: ArmResource) => (r.properties as any).criteria.allOf[0];

describe("alerts", () => {
  it("one action group, mailing alertEmail only when it is given", () => {
    const group = onlyResourceOfType(main, "Microsoft.Insights/actionGroups");
    expect(group.properties?.emailReceivers).toBe(
      "[if(empty(parameters('alertEmail')), createArray(), createArray(createObject('name', 'poolsync-alerts', 'emailAddress', parameters('alertEmail'), 'useCommonAlertSchema', true())))]",
    );
    expect(param("alertEmail")).toMatchObject({ type: "string", defaultValue: "" });
  });

  it("each alert the issue asks for, every one enabled by alertsEnabled and sent to the action group", () => {
    expect(metricAlerts.map(alertKey).sort()).toEqual([
      "eventgrid-deadletters",
      "eventgrid-delivery-failures",
      "function-failures",
    ]);
    expect(logAlerts.map(alertKey).sort()).toEqual([
      "arm-errors",
      "convergence-p95",
      "declarations-failing",
      "poison-messages",
      "throttling",
      "timer-dead-man",
    ]);
    for (const r of [...metricAlerts, ...logAlerts]) {
      expect(r.properties?.enabled, r.name).toBe("[parameters('alertsEnabled')]");
      expect(JSON.stringify(r.properties), r.name).toContain("[variables('actionGroupId')]");
    }
    expect(param("alertsEnabled")).toMatchObject({ type: "bool", defaultValue: true });
  });

  it("Event Grid: dead-lettered and failed deliveries on the system topic; function failures on Application Insights", () => {
    const byKey = Object.fromEntries(metricAlerts.map((r) => [alertKey(r), r]));
    expect(byKey["eventgrid-deadletters"]?.properties?.scopes).toEqual(["[variables('systemTopicId')]"]);
    expect(criterion(byKey["eventgrid-deadletters"] as ArmResource)).toMatchObject({
      metricNamespace: "Microsoft.EventGrid/systemTopics",
      metricName: "DeadLetteredCount",
      operator: "GreaterThan",
      threshold: 0,
    });
    expect(criterion(byKey["eventgrid-delivery-failures"] as ArmResource)).toMatchObject({
      metricName: "DeliveryAttemptFailCount",
      operator: "GreaterThan",
      threshold: 0,
    });
    expect(criterion(byKey["function-failures"] as ArmResource)).toMatchObject({
      metricNamespace: "microsoft.insights/components",
      metricName: "requests/failed",
      threshold: 0,
    });
  });

  it("the app's alerts query only the metric names the app emits, over Application Insights' customMetrics", () => {
    for (const r of logAlerts) {
      const query = criterion(r).query as string;
      expect(r.properties?.scopes, r.name).toEqual(["[variables('insightsId')]"]);
      const names = [...query.matchAll(/"(poolsync\.[a-z_.]+)"/g)].map((m) => m[1]);
      expect(names.length, r.name).toBeGreaterThan(0);
      for (const n of names) expect(APP_METRICS, `${r.name}: ${n}`).toContain(n);
      expect(query, r.name).toMatch(/^(let \w+ = toscalar\()?customMetrics/);
      expect(query, `${r.name} yields ${criterion(r).metricMeasureColumn}`).toContain(
        `${criterion(r).metricMeasureColumn} =`,
      );
    }
  });

  it("thresholds and windows: failing 30 minutes, p95 over 5 minutes, 0.5 % ARM errors, sustained throttling, 15 minutes without a timer run", () => {
    const byKey = Object.fromEntries(logAlerts.map((r) => [alertKey(r), r]));
    const shape = (k: string) => {
      const r = byKey[k] as ArmResource;
      const c = criterion(r);
      return {
        windowSize: r.properties?.windowSize,
        operator: c.operator,
        threshold: c.threshold,
        periods: c.failingPeriods,
      };
    };
    expect(shape("declarations-failing")).toEqual({
      windowSize: "PT5M",
      operator: "GreaterThan",
      threshold: 0,
      periods: { numberOfEvaluationPeriods: 6, minFailingPeriodsToAlert: 6 },
    });
    expect(shape("convergence-p95")).toMatchObject({
      windowSize: "PT5M",
      threshold: "[parameters('convergenceP95ThresholdSeconds')]",
    });
    expect(criterion(byKey["convergence-p95"] as ArmResource).query).toContain(
      "percentilew(value / valueCount, 95, valueCount)",
    );
    expect(shape("arm-errors")).toMatchObject({
      windowSize: "PT15M",
      threshold: "[parameters('armErrorRatePerMille')]",
    });
    expect(param("armErrorRatePerMille")).toMatchObject({ type: "int", defaultValue: 5, minValue: 1, maxValue: 1000 });
    expect(param("convergenceP95ThresholdSeconds")).toMatchObject({ type: "int", minValue: 1 });
    expect(shape("throttling")).toMatchObject({
      windowSize: "PT5M",
      periods: { numberOfEvaluationPeriods: 3, minFailingPeriodsToAlert: 3 },
    });
    expect(shape("timer-dead-man")).toMatchObject({ windowSize: "PT15M", operator: "LessThan", threshold: 1 });
    // A dead-man has to fire on silence: the query yields a row (0 runs) even when nothing was emitted at all.
    expect(criterion(byKey["timer-dead-man"] as ArmResource).query).toMatch(
      /print successfulRuns = coalesce\(successes, 0\.0\)$/,
    );
    expect(shape("poison-messages")).toMatchObject({ operator: "GreaterThan", threshold: 0 });
  });
});

describe("diagnostic settings and the workbook", () => {
  it("storage (account and its blob, queue, table services), the Function App and the Event Grid topic send to the workspace", () => {
    const settings = resourcesOfType(main, "Microsoft.Insights/diagnosticSettings");
    expect(settings.map((s) => s.scope)).toEqual([
      "[format('Microsoft.Storage/storageAccounts/{0}', variables('storageAccountName'))]",
      "[format('Microsoft.Storage/storageAccounts/{0}/blobServices/default', variables('storageAccountName'))]",
      "[format('Microsoft.Storage/storageAccounts/{0}/queueServices/default', variables('storageAccountName'))]",
      "[format('Microsoft.Storage/storageAccounts/{0}/tableServices/default', variables('storageAccountName'))]",
      "[format('Microsoft.Web/sites/{0}', variables('siteName'))]",
      "[format('Microsoft.EventGrid/systemTopics/{0}', variables('systemTopicName'))]",
    ]);
    for (const s of settings) expect(s.properties?.workspaceId).toBe("[variables('workspaceId')]");
    expect(main.variables?.workspaceId).toBe(
      "[resourceId('Microsoft.OperationalInsights/workspaces', variables('workspaceName'))]",
    );
  });

  it("the workbook charts convergence, writes, 412s, 429s, queue age and failures, each tile followed by a link to the status page", () => {
    const workbook = onlyResourceOfType(main, "Microsoft.Insights/workbooks");
    expect(workbook.properties?.serializedData).toBe(
      "[replace(string(variables('workbook')), variables('statusPagePlaceholder'), format('https://{0}/api/status', reference(variables('siteId'), '2024-04-01').defaultHostName))]",
    );
    const items = (
      main.variables?.workbook as {
        items: { type: number; name: string; content: { query?: string; json?: string } }[];
      }
    ).items;
    const tiles = items.filter((i) => i.type === 3);
    expect(tiles.map((t) => t.name)).toEqual([
      "convergence",
      "writes",
      "precondition-failed",
      "throttled",
      "queue-age",
      "failures",
    ]);
    for (const t of tiles) {
      const next = items[items.indexOf(t) + 1];
      expect(next?.content.json, t.name).toContain(`[status page](${main.variables?.statusPagePlaceholder as string})`);
      for (const n of [...(t.content.query ?? "").matchAll(/"(poolsync\.[a-z_.]+)"/g)].map((m) => m[1]))
        expect(APP_METRICS).toContain(n);
    }
    // ARM evaluates any string starting with "[" as an expression: no workbook text may.
    expect(JSON.stringify(main.variables?.workbook)).not.toMatch(/":"\[(?!\[)/);
  });
});

describe("Flex Consumption settings of today", () => {
  const site = onlyResourceOfType(main, "Microsoft.Web/sites");
  const config = site.properties?.functionAppConfig as Record<string, any>;

  it("maximumInstanceCount is bounded 1-1000", () => {
    expect(param("maximumInstanceCount")).toMatchObject({ minValue: 1, maxValue: 1000 });
    expect(config.scaleAndConcurrency.maximumInstanceCount).toBe("[parameters('maximumInstanceCount')]");
  });

  it("always-ready instances by parameter, off by default; the documented value names functions the app registers", () => {
    expect(param("alwaysReady")).toMatchObject({ type: "array", defaultValue: [] });
    expect(config.scaleAndConcurrency.alwaysReady).toBe("[parameters('alwaysReady')]");
    const documented = /(\[\{"name":"function:[\s\S]*?\}\])/.exec(
      String((param("alwaysReady")?.metadata as { description: string }).description),
    )?.[1];
    const entries = JSON.parse(documented as string) as { name: string; instanceCount: number }[];
    expect(entries).toEqual([
      { name: "function:applyBackendPools", instanceCount: 1 },
      { name: "function:onResourceEvent", instanceCount: 1 },
    ]);
    const entryGlob = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { main: string }).main;
    const registered = loadRegisteredFunctions({ entryGlob, appDir: REPO_ROOT, log: () => undefined });
    for (const e of entries) {
      const fn = registered.find((f) => `function:${f.name}` === e.name);
      // Flex scales HTTP and blob triggers as groups ("http", "blob"); any other trigger is its own "function:<name>".
      expect(fn, e.name).toBeDefined();
      expect(["httpTrigger", "blobTrigger"]).not.toContain(fn?.trigger.type);
    }
    const readme = readFileSync(join(REPO_ROOT, "infra", "README.md"), "utf8");
    expect(readme).toContain(
      '[{"name":"function:applyBackendPools","instanceCount":1},{"name":"function:onResourceEvent","instanceCount":1}]',
    );
  });

  it("zone redundancy on the plan, by parameter; no site update strategy (Microsoft.Web/sites@2024-04-01 has none)", () => {
    expect(param("zoneRedundant")).toMatchObject({ type: "bool", defaultValue: false });
    expect(onlyResourceOfType(main, "Microsoft.Web/serverfarms").properties?.zoneRedundant).toBe(
      "[parameters('zoneRedundant')]",
    );
    // functionAppConfig.siteUpdateStrategy is in no published api-version (restApiSpec.test.ts refuses it).
    expect(param("siteUpdateStrategy")).toBeUndefined();
    expect(config).not.toHaveProperty("siteUpdateStrategy");
  });

  it("sets no site property Flex Consumption does not support", () => {
    const siteConfig = site.properties?.siteConfig as Record<string, unknown>;
    for (const p of [
      "ftpsState",
      "alwaysOn",
      "linuxFxVersion",
      "use32BitWorkerProcess",
      "preWarmedInstanceCount",
      "functionAppScaleLimit",
    ])
      expect(siteConfig, p).not.toHaveProperty(p);
  });

  it("infra/README says what each costs", () => {
    const readme = readFileSync(join(REPO_ROOT, "infra", "README.md"), "utf8");
    const section = /## Flex Consumption settings[\s\S]*?(?=\n## )/.exec(readme)?.[0] ?? "";
    for (const p of ["alwaysReady", "zoneRedundant", "maximumInstanceCount", "instanceMemoryMB"]) {
      const row = section.split("\n").find((l) => l.includes(`\`${p}\``));
      expect(row, p).toBeDefined();
      expect(row, `${p}: what it costs`).toMatch(/cost|bill|free|pay/i);
    }
  });
});

describe("every parameter of main.json", () => {
  it("has a description and is used by the template (no parameter that changes nothing)", () => {
    const body = JSON.stringify({ variables: main.variables, resources: main.resources, outputs: main.outputs });
    for (const [name, p] of Object.entries(main.parameters ?? {})) {
      expect((p as { metadata?: { description?: string } }).metadata?.description?.length ?? 0, name).toBeGreaterThan(
        10,
      );
      expect(body, name).toContain(`parameters('${name}')`);
    }
  });
});
