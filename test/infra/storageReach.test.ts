/* eslint-disable @typescript-eslint/no-explicit-any -- these tests walk evaluated template JSON */
import { describe, expect, it } from "vitest";
import { deploy, type Deployed } from "./armExpressions";
import { readJson, type ArmTemplate } from "./templateChecks";

/**
 * Issue 44: with default parameters the storage account refused every network and the app was in none, so the host
 * could not read its package, queues or tables. These tests deploy the template on paper (infra/main.json evaluated for
 * given parameters) and follow the app's path to each storage service it uses.
 */

const main = readJson<ArmTemplate>("main.json");

/** What the deployer must give (everything else keeps its default). */
const REQUIRED = {
  poolsyncScopes: "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg-targets",
  poolsyncBindings: "/subscriptions/* => /subscriptions/*",
  authClientId: "11111111-1111-1111-1111-111111111111",
};

const SERVICES = ["blob", "queue", "table"] as const;

const vnetOf = (subnetId: string) =>
  subnetId.startsWith("/id/")
    ? subnetId.replace(/\/subnets\/([^/]+)\/[^/]+$/, "/$1")
    : subnetId.replace(/\/subnets\/[^/]+$/, "");

/** How the app reaches one storage service, or why it cannot. */
export function storagePath(resources: Deployed[], service: (typeof SERVICES)[number]): string {
  const of = (type: string) => resources.filter((r) => r.type.toLowerCase() === type.toLowerCase());
  const storage = of("Microsoft.Storage/storageAccounts")[0] as Deployed;
  const site = of("Microsoft.Web/sites")[0] as Deployed;
  const p = storage.body.properties as any;
  const subnet = (site.body.properties as any).virtualNetworkSubnetId as string | null;
  const acls = p.networkAcls ?? { defaultAction: "Allow" };

  const endpoint = of("Microsoft.Network/privateEndpoints").find(
    (e) =>
      (e.body.properties as any).privateLinkServiceConnections?.some(
        (c: any) => c.properties.privateLinkServiceId === storage.id && c.properties.groupIds?.includes(service),
      ) && subnet !== null,
  );
  if (endpoint) {
    const epVnet = vnetOf((endpoint.body.properties as any).subnet.id as string);
    if (epVnet !== vnetOf(subnet as string)) return `no path: the ${service} private endpoint is in another network`;
    const group = of("Microsoft.Network/privateEndpoints/privateDnsZoneGroups").find((g) =>
      g.name.startsWith(`${endpoint.name}/`),
    );
    const zoneId = (group?.body.properties as any)?.privateDnsZoneConfigs?.[0]?.properties?.privateDnsZoneId as string;
    const zone = of("Microsoft.Network/privateDnsZones").find((z) => z.id === zoneId);
    if (!zone) return `no path: the ${service} private endpoint registers in no private DNS zone`;
    if (zone.name !== `privatelink.${service}.core.windows.net`)
      return `no path: the ${service} endpoint's zone ${zone.name} is not privatelink.${service}.core.windows.net`;
    const linked = of("Microsoft.Network/privateDnsZones/virtualNetworkLinks").some(
      (l) => l.name.startsWith(`${zone.name}/`) && (l.body.properties as any).virtualNetwork.id === epVnet,
    );
    if (!linked) return `no path: the ${zone.name} zone is not linked to the app's network`;
    return "private endpoint";
  }
  if (p.publicNetworkAccess === "Disabled") return "no path: public network access is disabled and no private endpoint";
  if (acls.defaultAction === "Allow") return "public endpoint";
  if (subnet && (acls.virtualNetworkRules ?? []).some((r: any) => r.id === subnet && r.action === "Allow"))
    return "service endpoint";
  return "no path: the firewall denies and admits neither the app's subnet nor a private endpoint";
}

const paths = (template: ArmTemplate, parameters: Record<string, unknown>) => {
  const resources = deploy(template, { ...REQUIRED, ...parameters });
  return Object.fromEntries(SERVICES.map((s) => [s, storagePath(resources, s)]));
};

describe("the app reaches blob, queue and table storage", () => {
  it("with default parameters: a virtual network, the app's delegated subnet, private endpoints and their DNS zones", () => {
    expect(paths(main, {})).toEqual({ blob: "private endpoint", queue: "private endpoint", table: "private endpoint" });
    const resources = deploy(main, REQUIRED);
    const storage = resources.find((r) => r.type === "Microsoft.Storage/storageAccounts") as Deployed;
    // The public endpoint admits no network: only trusted Azure services (Event Grid's dead-letters) pass.
    expect((storage.body.properties as any).networkAcls).toEqual({
      defaultAction: "Deny",
      bypass: "AzureServices",
      virtualNetworkRules: [],
      ipRules: [],
    });
    const vnet = resources.find((r) => r.type === "Microsoft.Network/virtualNetworks") as Deployed;
    const app = (vnet.body.properties as any).subnets.find((s: any) => s.properties.delegations?.length);
    expect(app.properties.delegations[0].properties.serviceName).toBe("Microsoft.App/environments");
  });

  it("with a subnet of one's own: through its service endpoint, no network made", () => {
    const appSubnetId =
      "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/app";
    expect(paths(main, { appSubnetId })).toEqual({
      blob: "service endpoint",
      queue: "service endpoint",
      table: "service endpoint",
    });
    expect(deploy(main, { ...REQUIRED, appSubnetId }).some((r) => r.type.startsWith("Microsoft.Network/"))).toBe(false);
  });

  it("with public storage asked for (vnetEnabled false): through the public endpoint, Entra ID only", () => {
    expect(paths(main, { vnetEnabled: false })).toEqual({
      blob: "public endpoint",
      queue: "public endpoint",
      table: "public endpoint",
    });
    const storage = deploy(main, { ...REQUIRED, vnetEnabled: false }).find(
      (r) => r.type === "Microsoft.Storage/storageAccounts",
    ) as Deployed;
    expect((storage.body.properties as any).allowSharedKeyAccess).toBe(false);
  });

  it("the host is told each service's endpoint, which is the one the private DNS zone answers for", () => {
    const site = deploy(main, REQUIRED).find((r) => r.type === "Microsoft.Web/sites") as Deployed;
    const settings = Object.fromEntries(
      ((site.body.properties as any).siteConfig.appSettings as { name: string; value: string }[]).map((s) => [
        s.name,
        s.value,
      ]),
    );
    for (const s of SERVICES)
      expect(settings[`AzureWebJobsStorage__${s}ServiceUri`], s).toBe(`https://account.${s}.core.windows.net/`);
  });
});

describe("the path check can fail", () => {
  it("finds no path where storage refuses every network and the app is in none (the template before issue 44)", () => {
    const t = structuredClone(main);
    t.resources = t.resources.filter((r) => !r.type.startsWith("Microsoft.Network/"));
    const site = t.resources.find((r) => r.type === "Microsoft.Web/sites") as any;
    site.properties.virtualNetworkSubnetId = "[null()]";
    const storage = t.resources.find((r) => r.type === "Microsoft.Storage/storageAccounts") as any;
    storage.properties.publicNetworkAccess = "Disabled";
    storage.properties.networkAcls.defaultAction = "Deny";
    expect(paths(t, {}).blob).toBe("no path: public network access is disabled and no private endpoint");
  });

  it("finds no path when the private DNS zone is not linked to the app's network", () => {
    const t = structuredClone(main);
    t.resources = t.resources.filter((r) => r.type !== "Microsoft.Network/privateDnsZones/virtualNetworkLinks");
    expect(paths(t, {}).queue).toMatch(/^no path: the privatelink\.queue\.core\.windows\.net zone is not linked/);
  });
});
