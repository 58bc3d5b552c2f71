// The simulator's stored resources. Scale sets and instances keep their model in wire shape (the `properties`
// wrapper, as the REST API has it); server-owned fields (id, etag, provisioningState, ...) live beside the model and
// are added when a resource is rendered, so a body that echoes them back cannot change them.
import type { Json, JsonObject } from "./json";
import { canonical } from "./ids";

export interface ResourceGroupRecord {
  id: string;
  name: string;
  location: string;
}

export interface SubscriptionRecord {
  id: string;
  resourceGroups: Map<string, ResourceGroupRecord>;
}

export interface InstanceRecord {
  id: string;
  instanceId: string;
  /** `{ tags?, properties: { networkProfileConfiguration, osProfile, storageProfile, ... } }` */
  body: JsonObject;
  etag: number;
  vmId: string;
  timeCreated: string;
  sku: JsonObject;
  /** The scale set's virtualMachineProfile (without networkProfile) this instance was built from. */
  profileSnapshot: JsonObject;
  provisioningState: string;
  /** Removed when its scale-in or delete operation ends. */
  deleting: boolean;
  /** While a write's operation runs: the NIC configurations from before it, which pools still show (NRP shows the
   *  change once the operation has ended). Undefined: the current ones. */
  memberNics?: Json[];
}

export interface ScaleSetRecord {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  /** Wire-shaped model without server-owned fields: `{ location, tags?, sku, properties: {...}, ... }` */
  body: JsonObject;
  etag: number;
  uniqueId: string;
  timeCreated: string;
  provisioningState: string;
  /** Operations in progress on the scale set or its instances. */
  activeOperations: Set<string>;
  instances: Map<string, InstanceRecord>;
  nextInstanceId: number;
  deleting: boolean;
  /** Counts model changes an Automatic or Rolling upgrade rolls out; a newer one supersedes a rollout in progress. */
  rolloutGeneration: number;
  /** A Rolling upgrade is in progress: instance writes are refused. */
  rollingUpgrade: boolean;
  /** Flexible: which shape its VMs' network profiles have in answers (seeded; default nicConfigurations). */
  vmNetworkProfile?: "nicConfigurations" | "nicReferences" | "alternating";
}

export interface PoolRecord {
  id: string;
  name: string;
  etag: string;
  /** Made by a PUT on the pool API: answered with `loadBalancerBackendAddresses` even when it is not IP-based (`[]`,
   *  recorded); a pool made with its load balancer is answered without it unless it is IP-based (recorded). */
  madeWithPoolApi?: boolean;
  /** Declared by a seed or by `syncMode`: "ip" pools list addresses, "nic" pools take ip configurations. Undefined:
   *  decided by the first member (lbModel.ts), as for a legacy pool. */
  kind?: "nic" | "ip";
  /** `loadBalancerBackendAddresses` as written (IP-based pools), read-only fields dropped. */
  addresses?: JsonObject[];
  /** The pool's other writable properties as written (`virtualNetwork`, `syncMode`, `drainPeriodInSeconds`, ...). */
  properties?: JsonObject;
  /** Set while a write to this pool runs; NRP shows `Updating` until its operation ends. */
  provisioningState?: string;
}

/** An inbound NAT pool of a load balancer, in wire shape (`{ name, properties }`). */
export type NatPoolRecord = JsonObject;

export interface LoadBalancerRecord {
  id: string;
  name: string;
  location: string;
  resourceGroup: string;
  subscriptionId: string;
  etag: string;
  resourceGuid: string;
  skuName: string;
  pools: PoolRecord[];
  /** Inbound NAT pools (wire shape); their members are the scale set ip configurations that reference them. */
  natPools?: NatPoolRecord[];
  /** The rest of the load balancer as written: `tags` and the other `properties` collections (frontends, rules, ...). */
  body?: JsonObject;
  /** The virtual network its IP-based pools' addresses must be in (a seed's, else learnt from a frontend, a pool's
   *  `virtualNetwork` or the first address written). */
  virtualNetworkId?: string;
  provisioningState?: string;
}

/** A Network RP application gateway (appGateways.ts renders and writes it). */
export interface AppGatewayRecord {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  /** Wire-shaped, without server-owned fields: `{ tags?, identity?, zones?, properties: { sku, backendAddressPools, ... } }`. */
  body: JsonObject;
  etag: string;
  resourceGuid: string;
  provisioningState: string;
}

export interface SubnetRecord {
  id: string;
  name: string;
  addressPrefix: string;
  etag: string;
}

export interface VirtualNetworkRecord {
  id: string;
  name: string;
  location: string;
  addressPrefixes: string[];
  etag: string;
  resourceGuid: string;
  subnets: SubnetRecord[];
}

/** A Network RP network interface (nics.ts renders and writes it). */
export interface NicRecord {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  /** Wire-shaped, without server-owned fields: `{ tags?, properties: { ipConfigurations, ... } }`. */
  body: JsonObject;
  /** `W/"<guid>"`, as sent in the ETag header and the body. */
  etag: string;
  resourceGuid: string;
  macAddress: string;
  /** The VM the NIC is attached to. */
  virtualMachineId?: string;
  /** NRP's read-only `primary`: whether it is its VM's primary NIC. */
  primary?: boolean;
  provisioningState: string;
}

/** A top-level VM: of a Flexible scale set, or standalone (vms.ts). */
export interface VmRecord {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  /** `{ properties: { hardwareProfile, osProfile, storageProfile } }`: what the VM was built with. */
  body: JsonObject;
  /** The Flexible scale set it belongs to, if any. */
  scaleSetId?: string;
  /** Its NICs. */
  nicIds: string[];
  /** Which of them is primary; -1: none is flagged (a VM LIST or GET then flags none). */
  primaryIndex: number;
  /** Answers show the VM's own `networkApiVersion` and `networkInterfaceConfigurations` (else only its
   *  `networkInterfaces` references, as the API specification's examples show some VMs). */
  showsNicConfigurations: boolean;
  etag: number;
  vmId: string;
  timeCreated: string;
  provisioningState: string;
  deleting: boolean;
}

export class SimState {
  readonly subscriptions = new Map<string, SubscriptionRecord>();
  readonly scaleSets = new Map<string, ScaleSetRecord>();
  readonly loadBalancers = new Map<string, LoadBalancerRecord>();
  readonly virtualNetworks = new Map<string, VirtualNetworkRecord>();
  /** Network interfaces and VMs (of Flexible scale sets, or standalone), by canonical ID. */
  readonly nics = new Map<string, NicRecord>();
  readonly vms = new Map<string, VmRecord>();
  readonly appGateways = new Map<string, AppGatewayRecord>();

  clear(): void {
    this.subscriptions.clear();
    this.scaleSets.clear();
    this.loadBalancers.clear();
    this.virtualNetworks.clear();
    this.nics.clear();
    this.vms.clear();
    this.appGateways.clear();
  }

  /** Every region a resource group is in (what ARM lists as the supported locations). */
  locations(): string[] {
    return [...this.subscriptions.values()].flatMap((s) => [...s.resourceGroups.values()].map((g) => g.location));
  }

  subscription(id: string): SubscriptionRecord | undefined {
    return this.subscriptions.get(id.toLowerCase());
  }

  resourceGroup(sub: string, rg: string): ResourceGroupRecord | undefined {
    return this.subscription(sub)?.resourceGroups.get(rg.toLowerCase());
  }

  scaleSet(id: string): ScaleSetRecord | undefined {
    return this.scaleSets.get(canonical(id));
  }

  /** The pool with this ID, or undefined. */
  pool(id: string): { lb: LoadBalancerRecord; pool: PoolRecord } | undefined {
    const key = canonical(id);
    const lbKey = key.replace(/\/backendaddresspools\/[^/]+$/, "");
    const lb = this.loadBalancers.get(lbKey);
    const pool = lb?.pools.find((p) => canonical(p.id) === key);
    return lb && pool ? { lb, pool } : undefined;
  }

  subnet(id: string): SubnetRecord | undefined {
    const key = canonical(id);
    const vnet = this.virtualNetworks.get(key.replace(/\/subnets\/[^/]+$/, ""));
    return vnet?.subnets.find((s) => canonical(s.id) === key);
  }
}
