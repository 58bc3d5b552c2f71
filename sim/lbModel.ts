// A load balancer's model beyond its NIC-based pools: IP-based pools' addresses (with admin state), inbound NAT pools
// and the NAT rules NRP derives from them, and the other collections a load balancer PUT carries, rendered as NRP
// answers them. The NIC-based pool's own rendering stays in network.ts.
import { adminStatesAt } from "./adminState";
import { renderChild } from "./childResources";
import { canonical, LB_TYPE } from "./ids";
import { getPath, isJsonObject, type Json, type JsonObject } from "./json";
import { declaredPoolKind, type PoolKind } from "./poolKinds";
import { isReferenced, referencingIpConfigurations } from "./poolReferences";
import type { LoadBalancerRecord, PoolRecord, SimState } from "./state";

export const POOL_TYPE = `${LB_TYPE}/backendAddressPools`;
export const NAT_POOL_TYPE = `${LB_TYPE}/inboundNatPools`;
/** The collections of a load balancer PUT that are stored as written (pools and NAT pools have models of their own). */
export const STORED_COLLECTIONS = [
  "frontendIPConfigurations",
  "loadBalancingRules",
  "probes",
  "inboundNatRules",
  "outboundRules",
] as const;

/** The load balancer key, collection and child name of an ID under a load balancer. */
export function parseLbChildId(id: string): { lbKey: string; collection: string; name: string } | undefined {
  const m = /^(.*\/providers\/microsoft\.network\/loadbalancers\/[^/]+)\/([^/]+)\/([^/]+)$/.exec(canonical(id));
  return m?.[1] && m[2] && m[3] ? { lbKey: m[1], collection: m[2], name: m[3] } : undefined;
}

export function natPoolsOf(lb: LoadBalancerRecord): JsonObject[] {
  return lb.natPools ?? [];
}

export function findNatPool(lb: LoadBalancerRecord, name: string): JsonObject | undefined {
  return natPoolsOf(lb).find((p) => String(p["name"] ?? "").toLowerCase() === name.toLowerCase());
}

export function natPoolId(lb: LoadBalancerRecord, name: string): string {
  return `${lb.id}/inboundNatPools/${name}`;
}

/** The kind a pool is now: as it commits itself, else NIC-based once an ip configuration or a scale set model
 *  references it, else undecided (an empty legacy pool). */
export function effectivePoolKind(state: SimState, pool: PoolRecord): PoolKind | undefined {
  return (
    declaredPoolKind(pool) ?? (isReferenced(state, pool.id, "loadBalancerBackendAddressPools") ? "nic" : undefined)
  );
}

/** The pool's addresses as NRP answers them; `adminState` only at api-versions that define it. */
export function renderAddresses(pool: PoolRecord, apiVersion?: string): JsonObject[] {
  const showAdmin = apiVersion === undefined || adminStatesAt(apiVersion) !== undefined;
  return (pool.addresses ?? []).map((a) => {
    const copy = structuredClone(a);
    const props = copy["properties"];
    if (!showAdmin && isJsonObject(props)) delete props["adminState"];
    return copy;
  });
}

function refersTo(value: Json | undefined, key: string): boolean {
  if (Array.isArray(value)) return value.some((v) => refersTo(v, key));
  const id = getPath(value, "id");
  return typeof id === "string" && canonical(id) === key;
}

/** References to the load balancing rules that use the pool (NRP's read-only back-reference). */
export function ruleReferencesTo(lb: LoadBalancerRecord, poolId: string): JsonObject[] {
  const key = canonical(poolId);
  const rules = getPath(lb.body, "properties", "loadBalancingRules");
  if (!Array.isArray(rules)) return [];
  return rules
    .filter(
      (r) =>
        refersTo(getPath(r, "properties", "backendAddressPool"), key) ||
        refersTo(getPath(r, "properties", "backendAddressPools"), key),
    )
    .map((r) => ({ id: `${lb.id}/loadBalancingRules/${String(getPath(r, "name"))}` }));
}

/** The pool's own properties as written (virtualNetwork, syncMode, ...) and NRP's derived ones. */
export function poolProperties(lb: LoadBalancerRecord, pool: PoolRecord): JsonObject {
  const rules = ruleReferencesTo(lb, pool.id);
  return {
    ...structuredClone(pool.properties ?? {}),
    ...(rules.length > 0 ? { loadBalancingRules: rules } : {}),
  };
}

const parentOf = (lb: LoadBalancerRecord) => ({ id: lb.id, type: LB_TYPE, etag: lb.etag });

/**
 * The inbound NAT rules NRP creates from the NAT pools, one per scale set ip configuration that references a pool:
 * `<pool>.<instance id>`, frontend port `frontendPortRangeStart` + instance ID (skipped past the range's end).
 * This is how a load balancer shows who is in a NAT pool: the pool itself has no member list.
 */
export function derivedNatRules(state: SimState, lb: LoadBalancerRecord): JsonObject[] {
  const out: JsonObject[] = [];
  for (const pool of natPoolsOf(lb)) {
    const name = String(pool["name"]);
    const p = isJsonObject(pool["properties"]) ? pool["properties"] : {};
    const start = Number(p["frontendPortRangeStart"] ?? 0);
    const end = Number(p["frontendPortRangeEnd"] ?? start);
    referencingIpConfigurations(state, natPoolId(lb, name), "loadBalancerInboundNatPools").forEach((ref, k) => {
      const ordinal = ref.instanceId !== undefined ? Number(ref.instanceId) : k;
      if (start + ordinal > end) return;
      const rule: JsonObject = {
        name: `${name}.${ref.instanceId ?? k}`,
        properties: {
          ...(p["frontendIPConfiguration"] !== undefined
            ? { frontendIPConfiguration: structuredClone(p["frontendIPConfiguration"]) }
            : {}),
          frontendPort: start + ordinal,
          backendPort: p["backendPort"] ?? null,
          protocol: p["protocol"] ?? "Tcp",
          enableFloatingIP: p["enableFloatingIP"] ?? false,
          idleTimeoutInMinutes: p["idleTimeoutInMinutes"] ?? 4,
          enableTcpReset: p["enableTcpReset"] ?? false,
          backendIPConfiguration: { id: ref.id },
        },
      };
      out.push(renderChild(parentOf(lb), "inboundNatRules", rule));
    });
  }
  return out;
}

/** The NAT pools using a frontend, as its read-only `inboundNatPools` back-reference. */
function natPoolsOfFrontend(lb: LoadBalancerRecord, frontendName: string): JsonObject[] {
  const key = canonical(`${lb.id}/frontendIPConfigurations/${frontendName}`);
  return natPoolsOf(lb)
    .filter((p) => refersTo(getPath(p, "properties", "frontendIPConfiguration"), key))
    .map((p) => ({ id: natPoolId(lb, String(p["name"])) }));
}

/** NRP's private address for a frontend in a subnet with Dynamic allocation: the subnet's IPv4 prefix from .4 on (Azure
 *  keeps the first four), in frontend order. Which free address NRP picks is not public. */
function frontendAddress(state: SimState, frontend: JsonObject, ordinal: number): JsonObject {
  const props = isJsonObject(frontend["properties"]) ? frontend["properties"] : {};
  const subnetId = getPath(props, "subnet", "id");
  if (props["privateIPAddress"] !== undefined || typeof subnetId !== "string") return {};
  if (String(props["privateIPAllocationMethod"] ?? "Dynamic") !== "Dynamic") return {};
  const prefix = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/\d+$/.exec(state.subnet(subnetId)?.addressPrefix ?? "");
  if (!prefix) return {};
  const base = prefix.slice(1, 5).map(Number);
  const host = (base[3] ?? 0) + 4 + ordinal;
  return { privateIPAddress: `${base[0]}.${base[1]}.${(base[2] ?? 0) + (host >> 8)}.${host & 0xff}` };
}

/** Everything of a load balancer's `properties` but its backend pools. */
export function renderLbCollections(state: SimState, lb: LoadBalancerRecord): JsonObject {
  const out: JsonObject = {};
  for (const collection of STORED_COLLECTIONS) {
    const items = getPath(lb.body, "properties", collection);
    out[collection] = (Array.isArray(items) ? items.filter(isJsonObject) : []).map((item, i) => {
      if (collection !== "frontendIPConfigurations") return renderChild(parentOf(lb), collection, item);
      const pools = natPoolsOfFrontend(lb, String(item["name"]));
      return renderChild(parentOf(lb), collection, item, "Succeeded", {
        ...frontendAddress(state, item, i),
        ...(pools.length ? { inboundNatPools: pools } : {}),
      });
    });
  }
  out["inboundNatRules"] = [...(out["inboundNatRules"] as JsonObject[]), ...derivedNatRules(state, lb)];
  out["inboundNatPools"] = natPoolsOf(lb).map((p) => renderChild(parentOf(lb), "inboundNatPools", p));
  return out;
}

/** The virtual network a load balancer's IP-based addresses must be in, if it is known yet. */
export function lbVirtualNetworkId(lb: LoadBalancerRecord, exceptPool?: string): string | undefined {
  if (lb.virtualNetworkId) return lb.virtualNetworkId;
  const frontends = getPath(lb.body, "properties", "frontendIPConfigurations");
  for (const f of Array.isArray(frontends) ? frontends : []) {
    const subnet = getPath(f, "properties", "subnet", "id");
    if (typeof subnet === "string") return vnetOfSubnet(subnet);
  }
  for (const pool of lb.pools) {
    if (exceptPool !== undefined && pool.name.toLowerCase() === exceptPool.toLowerCase()) continue;
    const own = getPath(pool.properties, "virtualNetwork", "id");
    if (typeof own === "string") return own;
    for (const a of pool.addresses ?? []) {
      const vnet = addressVirtualNetwork(a);
      if (vnet) return vnet;
    }
  }
  return undefined;
}

/** NRP ties a load balancer to the virtual network of its first backends for good (MicrosoftDocs/azure-docs issue
 *  94896): once known, later writes are held to it even when they replace every address. */
export function learnVirtualNetwork(lb: LoadBalancerRecord): void {
  lb.virtualNetworkId ??= lbVirtualNetworkId(lb);
}

export function vnetOfSubnet(subnetId: string): string {
  return subnetId.replace(/\/subnets\/[^/]+$/i, "");
}

/** The virtual network an address names, directly or through its subnet. */
export function addressVirtualNetwork(address: JsonObject): string | undefined {
  const vnet = getPath(address, "properties", "virtualNetwork", "id");
  if (typeof vnet === "string") return vnet;
  const subnet = getPath(address, "properties", "subnet", "id");
  return typeof subnet === "string" ? vnetOfSubnet(subnet) : undefined;
}
