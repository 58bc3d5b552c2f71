import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config";
import {
  ALWAYS_NEEDED_JOIN_ACTIONS,
  JOIN_ACTIONS,
  REQUIRED_ARM_ACTIONS,
  REQUIRED_ARM_ACTIONS_WITH_REASONS,
  POOL_ACTIONS,
  DEFAULT_POOL_ACTIONS,
} from "../../src/azure/armPermissions";
import {
  INFRA_DIR,
  appSettings,
  eventGridDestinationFunctionNames,
  leafName,
  onlyResourceOfType,
  parameterNameFor,
  parameterReference,
  readJson,
  resolveVariables,
  resourcesOfType,
  unregisteredEventGridDestinations,
  type ArmTemplate,
} from "./templateChecks";

const main = readJson<ArmTemplate>("main.json");
const access = readJson<ArmTemplate>("access.json");
const parametersFile = readJson<{ parameters: Record<string, { value: unknown }> }>("main.parameters.json");

/** Functions the app registers with an Event Grid trigger (the contract until the built app is inspected). */
const EVENT_GRID_FUNCTIONS = ["onResourceEvent"] as const;

/** The ARM events the code treats as a hint (failures invalidate the cache too). */
const EVENT_TYPES = [
  "Microsoft.Resources.ResourceWriteSuccess",
  "Microsoft.Resources.ResourceDeleteSuccess",
  "Microsoft.Resources.ResourceActionSuccess",
  "Microsoft.Resources.ResourceWriteFailure",
  "Microsoft.Resources.ResourceActionFailure",
];

const BUILT_IN_ROLES = {
  storageBlobDataOwner: "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
  storageQueueDataContributor: "974c5e8b-45b9-4653-ba55-5f855dd0fb88",
  storageTableDataContributor: "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3",
  storageBlobDataContributor: "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
  monitoringMetricsPublisher: "3913510d-42f4-4e42-8a64-420c390055eb",
  websiteContributor: "de139f84-1756-47ae-9be6-808fbbe84772",
};

// A setting with `template` (a secret the template provisions itself, or one left to the platform) is not set to its
// default.
const settingEntries = (
  Object.entries(SETTINGS) as [string, { default: string | undefined; template?: string }][]
).filter(([, s]) => !s.template);

/**
 * Settings the template makes the deployer choose even where the code has a fallback (issue 26: bindings are real by
 * default).
 */
const TEMPLATE_REQUIRED = new Set(["POOLSYNC_BINDINGS"]);
const requiredInTemplate = ([name, s]: [string, { default: string | undefined }]) =>
  s.default === undefined || TEMPLATE_REQUIRED.has(name);

describe("app settings follow src/config.ts SETTINGS", () => {
  const settings = appSettings(main);

  it.each(settingEntries.filter(requiredInTemplate))(
    "required %s comes from a template parameter without default",
    (name) => {
      const value = settings.get(name);
      expect(value, `${name} is not an app setting in infra/main.json`).toBeDefined();
      const param = parameterReference(main, value);
      expect(param, `${name} must be [parameters('${parameterNameFor(name)}')]`).toBe(parameterNameFor(name));
      expect(main.parameters?.[param as string], `main.json lacks parameter ${String(param)}`).toBeDefined();
      expect(
        main.parameters?.[param as string]?.defaultValue,
        `${String(param)} must have no default: the deployer has to choose it`,
      ).toBeUndefined();
    },
  );

  it.each(settingEntries.filter((e) => !requiredInTemplate(e)))(
    "%s is set to the code's default (or a parameter defaulting to it)",
    (name, spec) => {
      expect(settings.has(name), `${name} is not an app setting in infra/main.json`).toBe(true);
      const param = parameterReference(main, settings.get(name));
      if (param) expect(main.parameters?.[param]?.defaultValue, `${param}'s default`).toBe(spec.default);
      else expect(resolveVariables(main, settings.get(name))).toBe(spec.default);
    },
  );

  it("sets no poolsync setting the code does not know", () => {
    // POOLSYNC_CACHE_KEY is a secret config.ts reads outside SETTINGS (security.test.ts checks it).
    const known = new Set([...Object.keys(SETTINGS), "POOLSYNC_CACHE_KEY"]);
    const stale = [...settings.keys()].filter(
      (n) => (n.startsWith("POOLSYNC_") || n === "ARM_ENDPOINT") && !known.has(n),
    );
    expect(stale).toEqual([]);
  });

  it("the cloud is the one the template is deployed to; ARM_ENDPOINT is left to it", () => {
    // environment().name is AzureCloud, AzureUSGovernment or AzureChinaCloud: POOLSYNC_CLOUD's own names.
    expect(settings.get("POOLSYNC_CLOUD")).toBe("[environment().name]");
    expect(SETTINGS.POOLSYNC_CLOUD.template).toBe("cloud");
    expect(settings.get("ARM_ENDPOINT")).toBe("");
  });

  it("storage is identity-based with the user-assigned identity, which DefaultAzureCredential also picks", () => {
    expect(settings.has("AzureWebJobsStorage")).toBe(false);
    // Each service's endpoint as the account reports it (the cloud's own suffix, the name its private DNS zone
    // answers for), not an account name the host would complete with the public cloud's suffix.
    expect(settings.has("AzureWebJobsStorage__accountName")).toBe(false);
    for (const service of ["blob", "queue", "table"])
      expect(settings.get(`AzureWebJobsStorage__${service}ServiceUri`)).toBe(
        `[reference(variables('storageId'), '2023-05-01').primaryEndpoints.${service}]`,
      );
    expect(settings.get("AzureWebJobsStorage__credential")).toBe("managedidentity");
    const clientId = settings.get("AzureWebJobsStorage__clientId");
    expect(clientId).toMatch(/^\[reference\(variables\('identityId'\), '[\d-]+'\)\.clientId\]$/);
    const site = onlyResourceOfType(main, "Microsoft.Web/sites") as {
      identity?: { type: string; userAssignedIdentities: Record<string, unknown> };
    };
    expect(site.identity?.type).toBe("UserAssigned");
    // The deploy identity is not attached: code in the app cannot sign in as it (issue 26).
    expect(Object.keys(site.identity?.userAssignedIdentities ?? {})).toEqual([
      "[variables('identityId')]",
      "[variables('armIdentityId')]",
    ]);
  });

  it("sets nothing Flex Consumption rejects (the runtime lives in functionAppConfig)", () => {
    for (const name of [
      "FUNCTIONS_WORKER_RUNTIME",
      "FUNCTIONS_EXTENSION_VERSION",
      "WEBSITE_NODE_DEFAULT_VERSION",
      "WEBSITE_RUN_FROM_PACKAGE",
      "WEBSITE_CONTENTAZUREFILECONNECTIONSTRING",
    ]) {
      expect(settings.has(name), name).toBe(false);
    }
  });
});

describe("hosting", () => {
  it("is a Flex Consumption plan running Node 22 from a package container the platform reaches with the app's storage identity", () => {
    const plan = onlyResourceOfType(main, "Microsoft.Web/serverfarms") as { sku?: { name: string; tier: string } };
    expect(plan.sku).toEqual({ name: "FC1", tier: "FlexConsumption" });
    const site = onlyResourceOfType(main, "Microsoft.Web/sites");
    const config = site.properties?.functionAppConfig as {
      runtime: { name: string; version: string };
      deployment: {
        storage: {
          type: string;
          value: string;
          authentication: { type: string; userAssignedIdentityResourceId: string };
        };
      };
    };
    expect(config.runtime).toEqual({ name: "node", version: "22" });
    expect(config.deployment.storage.type).toBe("blobContainer");
    expect(config.deployment.storage.authentication).toEqual({
      type: "UserAssignedIdentity",
      userAssignedIdentityResourceId: "[variables('identityId')]",
    });
    const containers = resourcesOfType(main, "Microsoft.Storage/storageAccounts/blobServices/containers").map((c) =>
      leafName(main, c.name),
    );
    expect(containers).toContain(leafName(main, config.deployment.storage.value));
  });

  it("the storage account allows no shared keys and no public blobs", () => {
    const props = onlyResourceOfType(main, "Microsoft.Storage/storageAccounts").properties;
    expect(props).toMatchObject({
      allowSharedKeyAccess: false,
      allowBlobPublicAccess: false,
      minimumTlsVersion: "TLS1_2",
    });
  });

  it("Application Insights sits on the Log Analytics workspace", () => {
    const insights = onlyResourceOfType(main, "Microsoft.Insights/components");
    const workspace = onlyResourceOfType(main, "Microsoft.OperationalInsights/workspaces");
    expect(insights.properties?.WorkspaceResourceId).toBe(
      `[resourceId('Microsoft.OperationalInsights/workspaces', ${workspace.name.slice(1, -1)})]`,
    );
    expect(appSettings(main).get("APPLICATIONINSIGHTS_CONNECTION_STRING")).toContain("ConnectionString");
  });
});

describe("queues and tables match the code's names", () => {
  const queues = resourcesOfType(main, "Microsoft.Storage/storageAccounts/queueServices/queues").map((q) =>
    leafName(main, q.name),
  );
  const tables = resourcesOfType(main, "Microsoft.Storage/storageAccounts/tableServices/tables").map((t) =>
    leafName(main, t.name),
  );

  it("creates the queue and its poison queue", () => {
    const queue = SETTINGS.POOLSYNC_QUEUE.default;
    expect(queues.sort()).toEqual([queue, `${queue}-poison`].sort());
  });

  it("creates the memberships and etagcache tables", () => {
    expect(tables.sort()).toEqual(
      [SETTINGS.POOLSYNC_MEMBERSHIPS_TABLE.default, SETTINGS.POOLSYNC_CACHE_TABLE.default].sort(),
    );
  });

  it("the app settings name the same queue and tables as the resources", () => {
    const settings = appSettings(main);
    expect(queues).toContain(resolveVariables(main, settings.get("POOLSYNC_QUEUE")));
    expect(tables).toContain(resolveVariables(main, settings.get("POOLSYNC_MEMBERSHIPS_TABLE")));
    expect(tables).toContain(resolveVariables(main, settings.get("POOLSYNC_CACHE_TABLE")));
  });
});

describe("Event Grid", () => {
  const topic = onlyResourceOfType(main, "Microsoft.EventGrid/systemTopics");
  const subscription = onlyResourceOfType(main, "Microsoft.EventGrid/systemTopics/eventSubscriptions");
  const props = subscription.properties as {
    filter: { includedEventTypes: unknown; advancedFilters: { operatorType: string; key: string; values: unknown }[] };
    retryPolicy: { maxDeliveryAttempts: unknown; eventTimeToLiveInMinutes: unknown };
    deadLetterWithResourceIdentity: {
      identity: { type: string; userAssignedIdentity: string };
      deadLetterDestination: { endpointType: string; properties: { resourceId: string; blobContainerName: string } };
    };
  };

  it("the system topic watches the subscription or a resource group, by parameter", () => {
    expect(topic.location).toBe("global");
    expect(main.parameters?.eventSource?.allowedValues).toEqual(["subscription", "resourceGroup"]);
    expect(resolveVariables(main, topic.properties?.topicType)).toContain("Microsoft.Resources.Subscriptions");
    expect(resolveVariables(main, topic.properties?.topicType)).toContain("Microsoft.Resources.ResourceGroups");
  });

  it("delivers to onResourceEvent on this app, as an AzureFunction destination", () => {
    expect(eventGridDestinationFunctionNames(main)).toEqual(["onResourceEvent"]);
    const destination = (subscription.properties as { destination: { properties: { resourceId: string } } }).destination
      .properties.resourceId;
    expect(resolveVariables(main, destination)).toMatch(
      /^\[format\('\{0\}\/functions\/\{1\}', variables\('siteId'\), /,
    );
    expect(resolveVariables(main, "[variables('siteId')]")).toBe(
      "[resourceId('Microsoft.Web/sites', variables('siteName'))]",
    );
    expect(onlyResourceOfType(main, "Microsoft.Web/sites").name).toBe("[variables('siteName')]");
  });

  it("every destination is a function the app registers with an Event Grid trigger", () => {
    expect(unregisteredEventGridDestinations(main, EVENT_GRID_FUNCTIONS)).toEqual([]);
    expect(unregisteredEventGridDestinations(main, ["somethingElse"])).toHaveLength(1);
  });

  it("subscribes to the ARM event types the code handles", () => {
    expect(resolveVariables(main, props.filter.includedEventTypes)).toEqual(EVENT_TYPES);
  });

  it("filters data.operationName to scale sets and their VMs, top-level VMs and NICs", () => {
    expect(props.filter.advancedFilters).toHaveLength(1);
    const [filter] = props.filter.advancedFilters;
    expect(filter?.key).toBe("data.operationName");
    expect(["StringBeginsWith", "StringIn"]).toContain(filter?.operatorType);
    const values = resolveVariables(main, filter?.values) as string[];
    expect(values).toEqual([
      "Microsoft.Compute/virtualMachineScaleSets/",
      "Microsoft.Compute/virtualMachines/",
      "Microsoft.Network/networkInterfaces/",
    ]);
    const ops = [
      "Microsoft.Compute/virtualMachineScaleSets/write",
      "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write",
      "Microsoft.Compute/virtualMachineScaleSets/delete",
      "Microsoft.Compute/virtualMachines/write",
      "Microsoft.Compute/virtualMachines/delete",
      "Microsoft.Network/networkInterfaces/write",
    ];
    for (const op of ops)
      expect(
        values.some((v) => op.toLowerCase().startsWith(v.toLowerCase())),
        op,
      ).toBe(true);
    for (const op of ["Microsoft.Network/loadBalancers/write", "Microsoft.Network/virtualNetworks/subnets/write"]) {
      expect(
        values.some((v) => op.toLowerCase().startsWith(v.toLowerCase())),
        op,
      ).toBe(false);
    }
  });

  it("retries, then dead-letters to the template's container with its own identity", () => {
    expect(props.retryPolicy.maxDeliveryAttempts).toBeDefined();
    expect(props.retryPolicy.eventTimeToLiveInMinutes).toBeDefined();
    const dl = props.deadLetterWithResourceIdentity;
    expect(dl.identity).toEqual({ type: "UserAssigned", userAssignedIdentity: "[variables('eventGridIdentityId')]" });
    expect(
      Object.keys(
        (topic as unknown as { identity: { userAssignedIdentities: object } }).identity.userAssignedIdentities,
      ),
    ).toEqual(["[variables('eventGridIdentityId')]"]);
    expect(dl.deadLetterDestination.endpointType).toBe("StorageBlob");
    const containers = resourcesOfType(main, "Microsoft.Storage/storageAccounts/blobServices/containers").map((c) =>
      leafName(main, c.name),
    );
    expect(containers).toContain(resolveVariables(main, dl.deadLetterDestination.properties.blobContainerName));
  });

  it("the Event Grid identity may write blobs to the dead-letter container only", () => {
    const grants = resourcesOfType(main, "Microsoft.Authorization/roleAssignments").filter((r) =>
      String(r.properties?.principalId).includes("eventGridIdentityId"),
    );
    expect(grants).toHaveLength(1);
    expect(grants[0]?.scope).toContain("/blobServices/default/containers/");
    expect(grants[0]?.properties?.roleDefinitionId).toContain("storageBlobDataContributor");
  });
});

describe("roles", () => {
  it("infra/README's role table lists exactly REQUIRED_ARM_ACTIONS", () => {
    const readme = readFileSync(join(__dirname, "../../infra/README.md"), "utf8");
    const listed = [...readme.matchAll(/^\|\s*`(Microsoft\.[^`]+)`\s*\|/gm)].map((m) => m[1]);
    expect([...new Set(listed)].sort()).toEqual([...REQUIRED_ARM_ACTIONS].sort());
  });

  it("REQUIRED_ARM_ACTIONS has no duplicates, no wildcards, and a reason for each", () => {
    expect(new Set(REQUIRED_ARM_ACTIONS).size).toBe(REQUIRED_ARM_ACTIONS.length);
    for (const [action, why] of REQUIRED_ARM_ACTIONS_WITH_REASONS) {
      expect(action).not.toContain("*");
      expect(why.length, action).toBeGreaterThan(10);
    }
  });

  it("the custom role grants the scale set actions and only the joins asked for: by default pools and subnets", () => {
    const role = onlyResourceOfType(access, "Microsoft.Authorization/roleDefinitions");
    const permissions = role.properties?.permissions as {
      actions: unknown;
      notActions: string[];
      dataActions: string[];
      notDataActions: string[];
    }[];
    expect(permissions).toHaveLength(1);
    const [p] = permissions;
    expect(p?.actions).toBe(
      "[if(equals(parameters('grant'), 'joinOnly'), concat(parameters('joinActions'), parameters('poolActions')), concat(variables('scaleSetActions'), parameters('joinActions'), parameters('poolActions')))]",
    );
    const scaleSetActions = access.variables?.scaleSetActions as string[];
    const joins = access.parameters?.joinActions as { defaultValue: string[]; allowedValues: string[] };
    // Issue 43: the backend pool read by default (every pass asks a pool its kind), the write only where asked.
    const pools = access.parameters?.poolActions as { defaultValue: string[]; allowedValues: string[] };
    expect(pools.allowedValues.sort()).toEqual([...POOL_ACTIONS].sort());
    expect(pools.defaultValue).toEqual(DEFAULT_POOL_ACTIONS);
    // Together they are exactly REQUIRED_ARM_ACTIONS: nothing extra can be granted, nothing needed is missing.
    expect([...scaleSetActions, ...joins.allowedValues, ...pools.allowedValues].sort()).toEqual(
      [...REQUIRED_ARM_ACTIONS].sort(),
    );
    expect(joins.allowedValues.sort()).toEqual([...JOIN_ACTIONS].sort());
    expect(scaleSetActions.some((a) => a.includes("join"))).toBe(false);
    expect(joins.defaultValue).toEqual(ALWAYS_NEEDED_JOIN_ACTIONS);
    expect(access.parameters?.grant).toMatchObject({
      defaultValue: "scaleSets",
      allowedValues: ["scaleSets", "joinOnly"],
    });
    expect(p?.dataActions).toEqual([]);
  });

  it("the infra README no longer claims a join is not granted, and names the joinOnly grant for a subnet elsewhere", () => {
    const readme = readFileSync(join(INFRA_DIR, "README.md"), "utf8");
    expect(readme).not.toMatch(/poolsync does not grant them/);
    expect(readme).toContain("joinOnly");
  });

  it("the custom role is assignable only at the target scope, and assigned there to poolsync's identity", () => {
    const role = onlyResourceOfType(access, "Microsoft.Authorization/roleDefinitions");
    expect(role.properties?.assignableScopes).toEqual(["[parameters('targetScope')]"]);
    const assignment = onlyResourceOfType(access, "Microsoft.Authorization/roleAssignments");
    expect(assignment.scope).toBeUndefined(); // at the deployment scope, i.e. the target scope
    expect(assignment.properties?.roleDefinitionId).toBe(
      `[subscriptionResourceId('Microsoft.Authorization/roleDefinitions', ${role.name.slice(1, -1)})]`,
    );
    expect(assignment.properties?.principalId).toBe("[parameters('principalId')]");
    expect(main.outputs?.principalId).toBeDefined();
  });

  it("storage: queue and table roles on the account, blob only on the host's own containers and the package; the deploy identity publishes to the site only", () => {
    const grants = resourcesOfType(main, "Microsoft.Authorization/roleAssignments");
    const roleOf = (r: { properties?: Record<string, unknown> }) =>
      /variables\('roles'\)\.(\w+)\)\]$/.exec(String(r.properties?.roleDefinitionId))?.[1];
    const onAccount = grants.filter(
      (r) => r.scope === "[format('Microsoft.Storage/storageAccounts/{0}', variables('storageAccountName'))]",
    );
    expect(onAccount.map(roleOf).sort()).toEqual(["storageQueueDataContributor", "storageTableDataContributor"]);
    for (const r of onAccount) expect(r.properties?.principalId).toContain("variables('identityId')");
    const blob = grants.filter(
      (r) =>
        String(r.properties?.principalId).includes("variables('identityId')") && roleOf(r)?.startsWith("storageBlob"),
    );
    expect(blob.map((r) => [roleOf(r), r.scope])).toEqual([
      [
        "storageBlobDataOwner",
        "[format('Microsoft.Storage/storageAccounts/{0}/blobServices/default/containers/azure-webjobs-hosts', variables('storageAccountName'))]",
      ],
      [
        "storageBlobDataOwner",
        "[format('Microsoft.Storage/storageAccounts/{0}/blobServices/default/containers/azure-webjobs-secrets', variables('storageAccountName'))]",
      ],
      [
        "storageBlobDataContributor",
        "[format('Microsoft.Storage/storageAccounts/{0}/blobServices/default/containers/{1}', variables('storageAccountName'), variables('packageContainerName'))]",
      ],
    ]);
    const deploy = grants.filter((r) => String(r.properties?.principalId).includes("deployIdentityId"));
    expect(deploy.map((r) => [roleOf(r), r.scope])).toEqual([
      ["websiteContributor", "[format('Microsoft.Web/sites/{0}', variables('siteName'))]"],
    ]);
    const site = onlyResourceOfType(main, "Microsoft.Web/sites");
    expect(
      (site.properties?.functionAppConfig as { deployment: { storage: { authentication: unknown } } }).deployment
        .storage.authentication,
    ).toEqual({
      type: "UserAssignedIdentity",
      userAssignedIdentityResourceId: "[variables('identityId')]",
    });
    const containers = resourcesOfType(main, "Microsoft.Storage/storageAccounts/blobServices/containers").map((c) =>
      leafName(main, c.name),
    );
    expect(containers).toEqual(expect.arrayContaining(["azure-webjobs-hosts", "azure-webjobs-secrets"]));
    const roles = resolveVariables(main, "[variables('roles')]") as Record<string, string>;
    for (const [name, id] of Object.entries(BUILT_IN_ROLES)) expect(roles[name], name).toBe(id);
  });

  it("ARM is called with an identity of its own, which holds no storage role; it is the one access.json is given", () => {
    const settings = appSettings(main);
    expect(settings.get("AZURE_CLIENT_ID")).toBe("[reference(variables('armIdentityId'), '2023-01-31').clientId]");
    const grants = resourcesOfType(main, "Microsoft.Authorization/roleAssignments").filter((r) =>
      String(r.properties?.principalId).includes("armIdentityId"),
    );
    expect(grants).toEqual([]);
    expect((main.outputs?.principalId as { value: string }).value).toBe(
      "[reference(variables('armIdentityId'), '2023-01-31').principalId]",
    );
  });

  it("no template grants Owner, Contributor or User Access Administrator", () => {
    const text =
      readFileSync(join(INFRA_DIR, "main.json"), "utf8") + readFileSync(join(INFRA_DIR, "access.json"), "utf8");
    for (const id of [
      "8e3af657-a8ff-443c-a75c-2fe8c4bcb635",
      "b24988ac-6180-42a0-ab88-20f7382dd24c",
      "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9",
    ]) {
      expect(text).not.toContain(id);
    }
  });
});

describe("parameters file (azd's, for infra/main.bicep)", () => {
  const declared = main.parameters ?? {};
  const values = Object.entries(parametersFile.parameters).map(([name, { value }]) => [name, value] as const);
  const AZD_REFERENCE = /^\$\{([A-Z][A-Z0-9_]*)(=[^}]*)?\}$/;

  it("names only parameters of main.json, plus azd's environmentName", () => {
    expect(Object.keys(parametersFile.parameters).filter((p) => !(p in declared) && p !== "environmentName")).toEqual(
      [],
    );
  });

  it("gives every parameter without a default, from an azd environment value without a fallback", () => {
    const required = Object.entries(declared)
      .filter(([, p]) => p.defaultValue === undefined)
      .map(([name]) => name);
    expect(required.sort()).toEqual(["authClientId", "poolsyncBindings", "poolsyncScopes"]);
    for (const name of required)
      expect(String(parametersFile.parameters[name]?.value), name).toMatch(/^\$\{[A-Z_]+\}$/);
  });

  it("every value is an azd environment reference; each one a fallback of the declared type names is documented in infra/README", () => {
    const readme = readFileSync(join(INFRA_DIR, "README.md"), "utf8");
    for (const [name, value] of values) {
      const m = AZD_REFERENCE.exec(String(value));
      expect(m, `${name}: ${String(value)}`).not.toBeNull();
      const variable = (m as RegExpExecArray)[1] as string;
      if (!variable.startsWith("AZURE_")) expect(readme, `${variable} in infra/README.md`).toContain(`\`${variable}\``);
      const fallback = (m as RegExpExecArray)[2]?.slice(1);
      const spec = declared[name];
      if (fallback !== undefined && spec?.type === "bool") expect(["true", "false"], name).toContain(fallback);
      if (fallback !== undefined && spec?.defaultValue !== undefined)
        expect(fallback, `${name}: its fallback is main.json's default`).toBe(String(spec.defaultValue));
    }
  });
});

describe("no real identifiers in infra/", () => {
  it("every GUID is a placeholder of zeros, a built-in role definition or one of poolsync's app role ids", () => {
    // app-roles.json's ids are poolsync's own app role ids, made up for it (the registration keeps them fixed).
    const appRoleIds = readJson<{ id: string }[]>("app-roles.json").map((r) => r.id);
    const allowed = new Set<string>([
      ...Object.values(BUILT_IN_ROLES),
      ...appRoleIds,
      "00000000-0000-0000-0000-000000000000",
    ]);
    // Our templates and docs only: infra/schemas is Microsoft's published schemas, copied as they are.
    for (const file of readdirSync(INFRA_DIR, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)) {
      const text = readFileSync(join(INFRA_DIR, file), "utf8");
      const guids = text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi) ?? [];
      expect(
        guids.filter((g) => !allowed.has(g.toLowerCase())),
        file,
      ).toEqual([]);
    }
  });
});
