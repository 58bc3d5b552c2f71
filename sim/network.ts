// The Network resources a scale set refers to, answered as NRP would: a load balancer whose pools list, as
// backendIPConfigurations, the instance ip configurations that reference them (so a test asks "who is in the pool?" the
// way one would in Azure), and virtual networks with their subnets. IP-based pools, NAT pools and the rest of a load
// balancer's model are lbModel.ts's.
import { LB_TYPE, VNET_TYPE } from "./ids";
import type { JsonObject } from "./json";
import { poolProperties, renderAddresses, renderLbCollections } from "./lbModel";
import { declaredPoolKind } from "./poolKinds";
import { referencingIpConfigurations } from "./poolReferences";
import type { LoadBalancerRecord, SimState, VirtualNetworkRecord } from "./state";

/** IDs of the instance ip configurations that reference the pool, in scale set and instance order, then those of NIC
 *  resources (Flexible scale sets' VMs and standalone VMs). */
export function backendIpConfigurationIds(state: SimState, poolId: string): string[] {
  return referencingIpConfigurations(state, poolId, "loadBalancerBackendAddressPools").map((r) => r.id);
}

/** `apiVersion`: the request's, which decides whether addresses show `adminState`; omitted, they do. */
export function renderPool(
  state: SimState,
  lb: LoadBalancerRecord,
  poolName: string,
  apiVersion?: string,
): JsonObject | undefined {
  const pool = lb.pools.find((p) => p.name.toLowerCase() === poolName.toLowerCase());
  if (!pool) return undefined;
  const members = backendIpConfigurationIds(state, pool.id);
  // As NRP answers: a pool's ETag is its load balancer's; an empty pool has no backendIPConfigurations key. An IP-based
  // pool lists its `loadBalancerBackendAddresses`; any other only when it was made through the pool API (recorded
  // empty), not when it was made with its load balancer and filled through NICs (recorded).
  return {
    name: pool.name,
    id: pool.id,
    etag: lb.etag,
    type: `${LB_TYPE}/backendAddressPools`,
    properties: {
      provisioningState: pool.provisioningState ?? "Succeeded",
      ...(pool.madeWithPoolApi || declaredPoolKind(pool) === "ip"
        ? { loadBalancerBackendAddresses: renderAddresses(pool, apiVersion) }
        : {}),
      ...poolProperties(lb, pool),
      ...(members.length > 0 ? { backendIPConfigurations: members.map((id) => ({ id })) } : {}),
    },
  };
}

export function renderLoadBalancer(state: SimState, lb: LoadBalancerRecord, apiVersion?: string): JsonObject {
  const tags = lb.body?.["tags"];
  const { backendAddressPools: _pools, ...own } = (lb.body?.["properties"] ?? {}) as JsonObject;
  return {
    name: lb.name,
    id: lb.id,
    etag: lb.etag,
    type: LB_TYPE,
    location: lb.location,
    ...(tags !== undefined ? { tags: structuredClone(tags) } : {}),
    sku: { name: lb.skuName, tier: "Regional" },
    properties: {
      ...structuredClone(own),
      provisioningState: lb.provisioningState ?? "Succeeded",
      resourceGuid: lb.resourceGuid,
      ...renderLbCollections(state, lb),
      backendAddressPools: lb.pools.map((p) => renderPool(state, lb, p.name, apiVersion) as JsonObject),
    },
  };
}

export function renderSubnet(vnet: VirtualNetworkRecord, subnetName: string): JsonObject | undefined {
  const s = vnet.subnets.find((x) => x.name.toLowerCase() === subnetName.toLowerCase());
  if (!s) return undefined;
  return {
    name: s.name,
    id: s.id,
    etag: s.etag,
    type: `${VNET_TYPE}/subnets`,
    properties: { provisioningState: "Succeeded", addressPrefix: s.addressPrefix },
  };
}

export function renderVirtualNetwork(vnet: VirtualNetworkRecord): JsonObject {
  return {
    name: vnet.name,
    id: vnet.id,
    etag: vnet.etag,
    type: VNET_TYPE,
    location: vnet.location,
    properties: {
      provisioningState: "Succeeded",
      resourceGuid: vnet.resourceGuid,
      addressSpace: { addressPrefixes: [...vnet.addressPrefixes] },
      subnets: vnet.subnets.map((s) => renderSubnet(vnet, s.name) as JsonObject),
    },
  };
}
