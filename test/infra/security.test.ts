/* eslint-disable @typescript-eslint/no-explicit-any -- these tests walk untyped template JSON */
import { describe, expect, it } from "vitest";
import {
  appSettings,
  onlyResourceOfType,
  readJson,
  resourcesOfType,
  type ArmResource,
  type ArmTemplate,
} from "./templateChecks";

/** Who may reach the app and its storage, as main.json deploys it. */
const main = readJson<ArmTemplate>("main.json");
const site = onlyResourceOfType(main, "Microsoft.Web/sites");
const children = (site.resources ?? []) as ArmResource[];
const child = (type: string, name: string) => {
  const found = children.filter((c) => c.type === type && c.name === name);
  expect(found, `${type} ${name} under the site`).toHaveLength(1);
  return found[0] as ArmResource;
};

/** The parts of `authsettingsV2` these tests read. */
interface AuthSettingsV2 {
  platform: unknown;
  globalValidation: unknown;
  identityProviders: {
    azureActiveDirectory: {
      enabled: boolean;
      registration: { clientId: string };
      validation: { allowedAudiences: string[] };
    };
  };
}

describe("the HTTP API behind Microsoft Entra ID", () => {
  it("App Service authentication: every call needs a token for the app registration, else 401; Event Grid's webhook keeps its key", () => {
    const auth = child("config", "authsettingsV2").properties as unknown as AuthSettingsV2;
    expect(auth.platform).toEqual({ enabled: true });
    expect(auth.globalValidation).toEqual({
      requireAuthentication: true,
      unauthenticatedClientAction: "Return401",
      excludedPaths: ["/runtime/webhooks/eventgrid"],
    });
    const aad = auth.identityProviders.azureActiveDirectory;
    expect(aad.enabled).toBe(true);
    expect(aad.registration.clientId).toBe("[parameters('authClientId')]");
    expect(aad.validation.allowedAudiences).toContain("[format('api://{0}', parameters('authClientId'))]");
    expect(main.parameters?.authClientId?.defaultValue).toBeUndefined();
  });

  it("the app trusts the platform's principal header (POOLSYNC_AUTH=entra) and takes its binding rules from a parameter", () => {
    const settings = appSettings(main);
    expect(settings.get("POOLSYNC_AUTH")).toBe("entra");
    expect(settings.get("POOLSYNC_BINDINGS")).toBe("[parameters('poolsyncBindings')]");
  });

  it("every host shares one cache key: POOLSYNC_CACHE_KEY from a securestring parameter, random by default and long enough", () => {
    const settings = appSettings(main);
    expect(settings.get("POOLSYNC_CACHE_KEY")).toBe("[parameters('poolsyncCacheKey')]");
    const p = main.parameters?.poolsyncCacheKey as
      { type?: string; defaultValue?: unknown; minLength?: number } | undefined;
    // securestring: ARM keeps it out of the deployment's history and outputs.
    expect(p?.type).toBe("securestring");
    expect(p?.minLength).toBe(32);
    // Two GUIDs (72 characters), made once per deployment: newGuid() is allowed only in a parameter default.
    expect(p?.defaultValue).toBe("[concat(newGuid(), newGuid())]");
    expect(JSON.stringify(main.outputs ?? {})).not.toContain("poolsyncCacheKey");
  });

  it("no basic auth: FTP and SCM publishing credentials are off", () => {
    expect(child("basicPublishingCredentialsPolicies", "ftp").properties).toEqual({ allow: false });
    expect(child("basicPublishingCredentialsPolicies", "scm").properties).toEqual({ allow: false });
    // ftpsState is on Flex Consumption's list of unsupported site properties (issue 28); the ftp policy above covers
    // it.
    expect(site.properties?.siteConfig).not.toHaveProperty("ftpsState");
  });
});

describe("network isolation, by parameter", () => {
  const storage = onlyResourceOfType(main, "Microsoft.Storage/storageAccounts").properties as Record<string, unknown>;

  // Which path the app takes to storage for each choice of parameters is followed in storageReach.test.ts; these
  // are the knobs and the defaults that must not drift.
  it("by default a network of its own (vnetEnabled); a subnet of one's own (appSubnetId) replaces it", () => {
    expect(main.parameters?.vnetEnabled).toMatchObject({ type: "bool", defaultValue: true });
    expect(main.parameters?.appSubnetId?.defaultValue).toBe("");
    expect(main.variables?.createNetwork).toBe("[and(parameters('vnetEnabled'), empty(parameters('appSubnetId')))]");
    expect(site.properties?.virtualNetworkSubnetId).toBe(
      "[if(variables('isolated'), variables('appSubnetResourceId'), null())]",
    );
    expect(storage.networkAcls).toMatchObject({
      bypass: "AzureServices",
      virtualNetworkRules: "[variables('storageVirtualNetworkRules')]",
    });
    expect(storage.allowSharedKeyAccess).toBe(false);
  });

  it("storage denies every other network once the app reaches it privately (trusted services excepted); listed IPs may still pass", () => {
    expect(main.parameters?.storageAllowAllNetworks).toMatchObject({ type: "bool", defaultValue: false });
    expect(main.parameters?.storageAllowedIpRanges).toMatchObject({ type: "array", defaultValue: [] });
    expect(storage.networkAcls).toMatchObject({
      defaultAction: "[if(variables('storagePublic'), 'Allow', 'Deny')]",
      ipRules: "[variables('storageIpRules')]",
    });
    expect(main.variables?.storageIpRules).toBe(
      "[map(parameters('storageAllowedIpRanges'), lambda('range', createObject('value', lambdaVariables('range'), 'action', 'Allow')))]",
    );
    expect(main.variables?.storagePublic).toBe(
      "[or(parameters('storageAllowAllNetworks'), not(variables('isolated')))]",
    );
    // Enabled, behind the firewall: with public access Disabled the trusted-services exception no longer applies, and
    // Event Grid's dead-letters (a trusted service, with its own identity) could not be written.
    expect(storage.publicNetworkAccess).toBe("Enabled");
  });

  it("the Event Grid dead-letter container is emptied after deadLetterRetentionInDays", () => {
    const policy = onlyResourceOfType(main, "Microsoft.Storage/storageAccounts/managementPolicies");
    const rules = (policy.properties as { policy: { rules: Record<string, any>[] } }).policy.rules;
    expect(rules).toHaveLength(1);
    const rule = rules[0] as Record<string, any>;
    expect(rule.enabled).toBe(true);
    expect(rule.definition.filters.prefixMatch).toEqual(["[format('{0}/', variables('deadLetterContainerName'))]"]);
    expect(rule.definition.actions.baseBlob.delete).toEqual({
      daysAfterCreationGreaterThan: "[parameters('deadLetterRetentionInDays')]",
    });
    expect(main.parameters?.deadLetterRetentionInDays).toMatchObject({ type: "int", minValue: 1, maxValue: 365 });
  });
});

describe("identities", () => {
  it("two for the app (storage, ARM), one that deploys from outside it, one for Event Grid, each with only its own grants", () => {
    expect(resourcesOfType(main, "Microsoft.ManagedIdentity/userAssignedIdentities").map((r) => r.name)).toEqual([
      "[variables('identityName')]",
      "[variables('eventGridIdentityName')]",
      "[variables('armIdentityName')]",
      "[variables('deployIdentityName')]",
    ]);
    const grantsTo = (id: string) =>
      resourcesOfType(main, "Microsoft.Authorization/roleAssignments").filter((r) =>
        String(r.properties?.principalId).includes(`variables('${id}')`),
      ).length;
    expect({
      storage: grantsTo("identityId"),
      arm: grantsTo("armIdentityId"),
      deploy: grantsTo("deployIdentityId"),
      eventGrid: grantsTo("eventGridIdentityId"),
    }).toEqual({ storage: 6, arm: 0, deploy: 1, eventGrid: 1 });
    const attached = Object.keys(
      (site as { identity?: { userAssignedIdentities: object } }).identity?.userAssignedIdentities ?? {},
    );
    expect(attached).not.toContain("[variables('deployIdentityId')]");
  });

  it("the deploy identity signs in from GitHub Actions by OIDC only when a subject is given", () => {
    const federated = onlyResourceOfType(
      main,
      "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
    );
    expect(federated.condition).toBe("[not(empty(parameters('githubOidcSubject')))]");
    expect(federated.name).toBe("[format('{0}/github-actions', variables('deployIdentityName'))]");
    expect(federated.properties).toEqual({
      issuer: "https://token.actions.githubusercontent.com",
      subject: "[parameters('githubOidcSubject')]",
      audiences: ["api://AzureADTokenExchange"],
    });
  });
});
