import { describe, expect, it } from "vitest";
import { appSettings, onlyResourceOfType, readJson, resourcesOfType, type ArmResource, type ArmTemplate } from "./templateChecks";

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
  identityProviders: { azureActiveDirectory: { enabled: boolean; registration: { clientId: string }; validation: { allowedAudiences: string[] } } };
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

  it("no basic auth: FTP and SCM publishing credentials are off", () => {
    expect(child("basicPublishingCredentialsPolicies", "ftp").properties).toEqual({ allow: false });
    expect(child("basicPublishingCredentialsPolicies", "scm").properties).toEqual({ allow: false });
    expect((site.properties?.siteConfig as { ftpsState: string }).ftpsState).toBe("Disabled");
  });
});

describe("network isolation, by parameter", () => {
  it("with appSubnetId the app is VNet-integrated and storage denies every other network (trusted services aside)", () => {
    expect(main.parameters?.appSubnetId?.defaultValue).toBe("");
    expect(main.variables?.isolated).toBe("[not(empty(parameters('appSubnetId')))]");
    expect(site.properties?.virtualNetworkSubnetId).toBe("[if(variables('isolated'), parameters('appSubnetId'), null())]");
    const storage = onlyResourceOfType(main, "Microsoft.Storage/storageAccounts").properties as Record<string, unknown>;
    expect(storage.networkAcls).toBe(
      "[if(variables('isolated'), createObject('defaultAction', 'Deny', 'bypass', 'AzureServices', 'virtualNetworkRules', createArray(createObject('id', parameters('appSubnetId'), 'action', 'Allow')), 'ipRules', createArray()), createObject('defaultAction', 'Allow', 'bypass', 'AzureServices'))]",
    );
    expect(storage.allowSharedKeyAccess).toBe(false);
  });
});

describe("identities", () => {
  it("three for the app (storage, ARM, deployment) and one for Event Grid, each with only its own grants", () => {
    expect(resourcesOfType(main, "Microsoft.ManagedIdentity/userAssignedIdentities").map((r) => r.name)).toEqual([
      "[variables('identityName')]",
      "[variables('eventGridIdentityName')]",
      "[variables('armIdentityName')]",
      "[variables('deployIdentityName')]",
    ]);
    const grantsTo = (id: string) =>
      resourcesOfType(main, "Microsoft.Authorization/roleAssignments").filter((r) => String(r.properties?.principalId).includes(`variables('${id}')`)).length;
    expect({
      storage: grantsTo("identityId"),
      arm: grantsTo("armIdentityId"),
      deploy: grantsTo("deployIdentityId"),
      eventGrid: grantsTo("eventGridIdentityId"),
    }).toEqual({ storage: 5, arm: 0, deploy: 1, eventGrid: 1 });
  });
});
