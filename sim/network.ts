// The Network resources a scale set refers to, answered as NRP would: a load balancer whose pools list, as
// backendIPConfigurations, the instance ip configurations that reference them (so a test asks "who is in the pool?" the
// way one would in Azure), and virtual networks with their subnets.
import { canonical, LB_TYPE, VNET_TYPE } from "./ids";
import type { JsonObject } from "./json";
import { nicBackendIpConfigurationIds } from "./nics";
import { instanceNicConfigs, ipConfigurations, poolIdsOf } from "./scaleSets";
import type { LoadBalancerRecord, SimState, VirtualNetworkRecord } from "./state";

/** IDs of the instance ip configurations that reference the pool, in scale set and instance order, then those of NIC
 *  resources (Flexible scale sets' VMs and standalone VMs). */
export function backendIpConfigurationIds(state: SimState, poolId: string): string[] {
  const key = canonical(poolId);
  const out: string[] = [];
  for (const ss of state.scaleSets.values()) {
    for (const inst of ss.instances.values()) {
      for (const { nic, name, ipc } of ipConfigurations(inst.memberNics ?? instanceNicConfigs(inst))) {
        if (poolIdsOf(ipc).some((p) => canonical(p) === key)) {
          out.push(`${inst.id}/networkInterfaces/${nic}/ipConfigurations/${name}`);
        }
      }
    }
  }
  out.push(...nicBackendIpConfigurationIds(state, poolId));
  return out;
}

export function renderPool(state: SimState, lb: LoadBalancerRecord, poolName: string): JsonObject | undefined {
  const pool = lb.pools.find((p) => p.name.toLowerCase() === poolName.toLowerCase());
  if (!pool) return undefined;
  const members = backendIpConfigurationIds(state, pool.id);
  // As NRP answers: a pool's ETag is its load balancer's; an empty pool has no backendIPConfigurations key; only a pool
  // made through the pool API lists `loadBalancerBackendAddresses` (recorded empty), one made with its load balancer
  // and filled through NICs does not.
  return {
    name: pool.name,
    id: pool.id,
    etag: lb.etag,
    type: `${LB_TYPE}/backendAddressPools`,
    properties: {
      provisioningState: "Succeeded",
      ...(pool.madeWithPoolApi ? { loadBalancerBackendAddresses: [] } : {}),
      ...(members.length > 0 ? { backendIPConfigurations: members.map((id) => ({ id })) } : {}),
    },
  };
}

export function renderLoadBalancer(state: SimState, lb: LoadBalancerRecord): JsonObject {
  return {
    name: lb.name,
    id: lb.id,
    etag: lb.etag,
    type: LB_TYPE,
    location: lb.location,
    sku: { name: lb.skuName, tier: "Regional" },
    properties: {
      provisioningState: "Succeeded",
      resourceGuid: lb.resourceGuid,
      frontendIPConfigurations: [],
      backendAddressPools: lb.pools.map((p) => renderPool(state, lb, p.name) as JsonObject),
      loadBalancingRules: [],
      probes: [],
      inboundNatRules: [],
      outboundRules: [],
      inboundNatPools: [],
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
