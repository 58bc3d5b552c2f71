// Seeding: subscriptions, resource groups, virtual networks and subnets, load balancers and pools, and scale sets
// (capacity and NIC configurations), from the control API, `--seed file.json`, or `--seed demo`.
import type { JsonObject } from "./json";
import { mergeArm } from "./merge";

export interface SeedSpec {
  subscriptions: SubscriptionSeed[];
}

export interface SubscriptionSeed {
  id: string;
  resourceGroups: ResourceGroupSeed[];
}

export interface ResourceGroupSeed {
  name: string;
  location: string;
  virtualNetworks?: VirtualNetworkSeed[];
  loadBalancers?: LoadBalancerSeed[];
  scaleSets?: ScaleSetSeed[];
  /** Standalone VMs, each with its NIC resources. */
  virtualMachines?: VirtualMachineSeed[];
  /** Application gateways (before scale sets and VMs, whose ip configurations may reference their pools). */
  applicationGateways?: ApplicationGatewaySeed[];
}

export interface VirtualMachineSeed {
  name: string;
  /** NIC resources, the primary first: `name` is the NIC resource's name. */
  nics: NicSeed[];
  /** How the VM's GET shows its network (default "nicReferences": `networkInterfaces: [{id, properties}]` only, as a
   *  VM made with NIC references answers; "nicConfigurations": also its `networkApiVersion` and
   *  `networkInterfaceConfigurations`, as a VM whose NICs CRP built). */
  networkProfile?: VmNetworkProfile;
}

/** Which shape a VM's `networkProfile` has in answers (the API specification's examples show both). */
export type VmNetworkProfile = "nicConfigurations" | "nicReferences";

export interface VirtualNetworkSeed {
  name: string;
  addressPrefixes?: string[];
  subnets: { name: string; addressPrefix?: string }[];
}

export interface LoadBalancerSeed {
  name: string;
  /** Default "Standard". */
  sku?: string;
  /** Backend pools: a name (a NIC-based or undecided pool, as before) or a pool with its kind and addresses. */
  backendPools: (string | BackendPoolSeed)[];
  /** Pools that were made by a PUT on the pool API: NRP answers those with `loadBalancerBackendAddresses` even while
   *  NIC-based (`[]`, recorded), pools made with their load balancer and filled through NICs without it (recorded). */
  poolsMadeWithPoolApi?: string[];
  /** Inbound NAT pools (scale set ip configurations join them with `inboundNatPools`). */
  inboundNatPools?: InboundNatPoolSeed[];
  /** The virtual network (`name` in the group, or an ID) its IP-based pools' addresses must be in; learnt from the
   *  first address otherwise. */
  virtualNetwork?: string;
}

export interface BackendPoolSeed {
  name: string;
  /** "ip": lists addresses (ip configurations cannot join it); "nic": joined by ip configurations. Omitted: decided
   *  by the first member, as for a legacy pool (an empty pool then looks the same either way). */
  kind?: "nic" | "ip";
  /** The pool says its kind itself (api-versions from 2023-05-01): "Manual" is IP-based, "Automatic" NIC-based.
   *  Needs `virtualNetwork`. */
  syncMode?: "Automatic" | "Manual";
  /** The pool's `virtualNetwork` (`name` in the group, or an ID). */
  virtualNetwork?: string;
  addresses?: BackendAddressSeed[];
}

export interface BackendAddressSeed {
  name: string;
  ipAddress: string;
  /** `name` or ID; or `subnet` ("vnet/subnet" or ID); neither when the pool names its virtual network. */
  virtualNetwork?: string;
  subnet?: string;
  adminState?: "None" | "Up" | "Down" | "Drain";
}

export interface InboundNatPoolSeed {
  name: string;
  /** Default "Tcp". */
  protocol?: "Tcp" | "Udp" | "All";
  frontendPortRangeStart: number;
  frontendPortRangeEnd: number;
  backendPort: number;
}

export interface ApplicationGatewaySeed {
  name: string;
  /** Default Standard_v2 / Standard_v2, capacity 2. */
  skuName?: string;
  tier?: string;
  capacity?: number;
  /** Its own subnet, "vnet/subnet" or an ID (gatewayIPConfigurations); none when omitted. */
  subnet?: string;
  /** Pool names, or pools with `backendAddresses` (IP or FQDN). */
  backendPools: (string | { name: string; backendAddresses?: ({ ipAddress: string } | { fqdn: string })[] })[];
}

export interface ScaleSetSeed {
  name: string;
  capacity: number;
  /** Default Standard_D2s_v3 / Standard. */
  skuName?: string;
  tier?: string;
  tags?: Record<string, string>;
  nics: NicSeed[];
  /** Default Uniform. A Flexible scale set's VMs are top-level VMs with NIC resources; its model carries
   *  `networkProfile.networkApiVersion` (default 2020-11-01). */
  orchestrationMode?: "Uniform" | "Flexible";
  /** Raw wire `properties` merged into the model (upgradePolicy, virtualMachineProfile.osProfile, ...). */
  properties?: JsonObject;
  /** Flexible: how its VMs' GETs show their network. "nicConfigurations" (default): each VM's own `networkApiVersion`
   *  and `networkInterfaceConfigurations` beside `networkInterfaces`; "nicReferences": `networkInterfaces` only (the
   *  API specification's example of a Flexible member); "alternating": VMs with an even ordinal (the 1st, 3rd, …)
   *  the first, the others the second. */
  vmNetworkProfile?: VmNetworkProfile | "alternating";
  /** A whole wire model used as it is (a recorded PUT body): `capacity`, `nics` and the rest are then ignored. */
  model?: JsonObject;
}

export interface NicSeed {
  name: string;
  /** A standalone VM's NIC resource in another resource group of the VM's subscription (Azure allows it). */
  resourceGroup?: string;
  primary?: boolean;
  enableAcceleratedNetworking?: boolean;
  enableIPForwarding?: boolean;
  ipConfigurations: IpConfigurationSeed[];
}

export interface IpConfigurationSeed {
  name: string;
  primary?: boolean;
  /** Default IPv4. */
  privateIPAddressVersion?: "IPv4" | "IPv6";
  /** `vnet/subnet` in the same resource group, or a full subnet ID. */
  subnet: string;
  /** `lb/pool` in the same resource group, or full pool IDs. */
  backendPools?: string[];
  /** Inbound NAT pools, `lb/natPool` or IDs (scale sets only: a NIC cannot reference a NAT pool). */
  inboundNatPools?: string[];
  /** Application gateway backend pools, `gateway/pool` or IDs. */
  applicationGatewayBackendPools?: string[];
}

export const DEMO_SUBSCRIPTION = "11111111-2222-3333-4444-555555555555";

/** The demo world: a scale set of two nodes with Manual upgrades, one with Automatic upgrades (CRP rolls its model out
 *  to its instances), a load balancer with one pool, nobody in it yet. */
export const DEMO_SEED: SeedSpec = {
  subscriptions: [
    {
      id: DEMO_SUBSCRIPTION,
      resourceGroups: [
        {
          name: "etag",
          location: "eastus2",
          virtualNetworks: [
            {
              name: "etag-k8s-vnet",
              addressPrefixes: ["10.0.0.0/8"],
              subnets: [{ name: "node-subnet", addressPrefix: "10.1.0.0/16" }],
            },
          ],
          loadBalancers: [{ name: "etag-k8s", backendPools: ["etag-k8s", "etag-k8s-v6"] }],
          scaleSets: [
            {
              name: "etag-k8s-mp-0",
              capacity: 2,
              nics: [
                {
                  name: "etag-k8s-mp-0-nic-0",
                  primary: true,
                  enableAcceleratedNetworking: true,
                  enableIPForwarding: true,
                  ipConfigurations: [
                    {
                      name: "ipConfig0",
                      primary: true,
                      privateIPAddressVersion: "IPv4",
                      subnet: "etag-k8s-vnet/node-subnet",
                    },
                  ],
                },
              ],
            },
            {
              name: "etag-k8s-mp-auto",
              capacity: 2,
              properties: { upgradePolicy: { mode: "Automatic" } },
              nics: [
                {
                  name: "etag-k8s-mp-auto-nic-0",
                  primary: true,
                  enableAcceleratedNetworking: true,
                  enableIPForwarding: true,
                  ipConfigurations: [
                    {
                      name: "ipConfig0",
                      primary: true,
                      privateIPAddressVersion: "IPv4",
                      subnet: "etag-k8s-vnet/node-subnet",
                    },
                  ],
                },
              ],
            },
            {
              name: "etag-k8s-flex-0",
              capacity: 2,
              orchestrationMode: "Flexible",
              nics: [
                {
                  name: "etag-k8s-flex-0-nic-0",
                  primary: true,
                  ipConfigurations: [
                    {
                      name: "ipConfig0",
                      primary: true,
                      privateIPAddressVersion: "IPv4",
                      subnet: "etag-k8s-vnet/node-subnet",
                    },
                    { name: "ipConfig0-v6", privateIPAddressVersion: "IPv6", subnet: "etag-k8s-vnet/node-subnet" },
                  ],
                },
              ],
            },
          ],
          virtualMachines: [
            {
              name: "etag-k8s-vm-0",
              nics: [
                {
                  name: "etag-k8s-vm-0-nic",
                  primary: true,
                  ipConfigurations: [
                    {
                      name: "ipConfig0",
                      primary: true,
                      privateIPAddressVersion: "IPv4",
                      subnet: "etag-k8s-vnet/node-subnet",
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    },
  ],
};

/** What a seed is applied to (the engine). */
export interface SeedTarget {
  addResourceGroup(subscriptionId: string, name: string, location: string): void;
  addVirtualNetwork(subscriptionId: string, resourceGroup: string, seed: VirtualNetworkSeed): void;
  addLoadBalancer(subscriptionId: string, resourceGroup: string, seed: LoadBalancerSeed): void;
  addApplicationGateway(subscriptionId: string, resourceGroup: string, seed: ApplicationGatewaySeed): void;
  addScaleSet(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    model: JsonObject,
    vmNetworkProfile?: VmNetworkProfile | "alternating",
  ): void;
  addVirtualMachine(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    nics: { name: string; config: JsonObject; resourceGroup?: string }[],
    networkProfile?: VmNetworkProfile,
  ): void;
}

export function refId(sub: string, rg: string, ref: string, provider: string, child: string): string {
  if (ref.startsWith("/")) return ref;
  const [parent, name] = ref.split("/");
  if (!parent || !name) throw new Error(`seed: expected "parent/child" or a full ID, got "${ref}"`);
  return `/subscriptions/${sub}/resourceGroups/${rg}/providers/${provider}/${parent}/${child}/${name}`;
}

/** The wire-shaped model of a seeded scale set. */
export function scaleSetModel(sub: string, rg: string, location: string, s: ScaleSetSeed): JsonObject {
  if (s.model) return { location, ...structuredClone(s.model) };
  const nics = s.nics.map((n) => nicConfiguration(sub, rg, n));
  const flexible = s.orchestrationMode === "Flexible";
  const network: JsonObject = flexible
    ? { networkApiVersion: "2020-11-01", networkInterfaceConfigurations: nics }
    : { networkInterfaceConfigurations: nics };
  const base: JsonObject = {
    location,
    ...(s.tags ? { tags: { ...s.tags } } : {}),
    sku: { name: s.skuName ?? "Standard_D2s_v3", tier: s.tier ?? "Standard", capacity: s.capacity },
    properties: {
      singlePlacementGroup: false,
      orchestrationMode: flexible ? "Flexible" : "Uniform",
      ...(flexible ? { platformFaultDomainCount: 1 } : { upgradePolicy: { mode: "Manual" }, overprovision: false }),
      virtualMachineProfile: {
        osProfile: {
          computerNamePrefix: s.name,
          adminUsername: "azureuser",
          linuxConfiguration: { disablePasswordAuthentication: true },
        },
        storageProfile: {
          imageReference: {
            publisher: "Canonical",
            offer: "0001-com-ubuntu-server-jammy",
            sku: "22_04-lts-gen2",
            version: "latest",
          },
          osDisk: {
            createOption: "FromImage",
            caching: "ReadWrite",
            managedDisk: { storageAccountType: "Premium_LRS" },
          },
        },
        networkProfile: network,
      },
    },
  };
  return s.properties ? mergeProperties(base, s.properties) : base;
}

/** A NIC configuration in the VMSS model's wire shape (also what a seeded VM's NIC resource is built from). */
export function nicConfiguration(sub: string, rg: string, n: NicSeed): JsonObject {
  return {
    name: n.name,
    properties: {
      primary: n.primary ?? false,
      enableAcceleratedNetworking: n.enableAcceleratedNetworking ?? false,
      enableIPForwarding: n.enableIPForwarding ?? false,
      ipConfigurations: n.ipConfigurations.map((c) => ({
        name: c.name,
        properties: {
          primary: c.primary ?? false,
          privateIPAddressVersion: c.privateIPAddressVersion ?? "IPv4",
          subnet: { id: refId(sub, rg, c.subnet, "Microsoft.Network/virtualNetworks", "subnets") },
          ...(c.backendPools && c.backendPools.length > 0
            ? {
                loadBalancerBackendAddressPools: c.backendPools.map((p) => ({
                  id: refId(sub, rg, p, "Microsoft.Network/loadBalancers", "backendAddressPools"),
                })),
              }
            : {}),
          ...(c.inboundNatPools && c.inboundNatPools.length > 0
            ? {
                loadBalancerInboundNatPools: c.inboundNatPools.map((p) => ({
                  id: refId(sub, rg, p, "Microsoft.Network/loadBalancers", "inboundNatPools"),
                })),
              }
            : {}),
          ...(c.applicationGatewayBackendPools && c.applicationGatewayBackendPools.length > 0
            ? {
                applicationGatewayBackendAddressPools: c.applicationGatewayBackendPools.map((p) => ({
                  id: refId(sub, rg, p, "Microsoft.Network/applicationGateways", "backendAddressPools"),
                })),
              }
            : {}),
        },
      })),
    },
  };
}

function mergeProperties(base: JsonObject, extra: JsonObject): JsonObject {
  return mergeArm(base, { properties: extra });
}

export function applySeed(spec: SeedSpec, target: SeedTarget): void {
  for (const sub of spec.subscriptions) {
    for (const rg of sub.resourceGroups) {
      target.addResourceGroup(sub.id, rg.name, rg.location);
      for (const v of rg.virtualNetworks ?? []) target.addVirtualNetwork(sub.id, rg.name, v);
      for (const lb of rg.loadBalancers ?? []) target.addLoadBalancer(sub.id, rg.name, lb);
      for (const agw of rg.applicationGateways ?? []) target.addApplicationGateway(sub.id, rg.name, agw);
      for (const ss of rg.scaleSets ?? [])
        target.addScaleSet(
          sub.id,
          rg.name,
          ss.name,
          scaleSetModel(sub.id, rg.name, rg.location, ss),
          ss.vmNetworkProfile,
        );
      for (const vm of rg.virtualMachines ?? []) {
        target.addVirtualMachine(
          sub.id,
          rg.name,
          vm.name,
          vm.nics.map((n) => ({
            name: n.name,
            config: nicConfiguration(sub.id, rg.name, n),
            ...(n.resourceGroup ? { resourceGroup: n.resourceGroup } : {}),
          })),
          vm.networkProfile,
        );
      }
    }
  }
}
