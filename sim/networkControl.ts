// The control API's side of load balancers and application gateways: another writer (a merge patch through
// `control.write`, the interleaved writer, or address changes through `control.writePoolAddresses`), which goes
// through the same writes as the API and so meets the same 409 and 412; and a view of any pool kind at this moment.
import { gatewayPoolId, gatewayPools, renderAppGateway, writeAppGateway } from "./appGateways";
import { canonical } from "./ids";
import { getPath, isJsonObject, type Json, type JsonObject } from "./json";
import { effectivePoolKind, findNatPool, natPoolId, parseLbChildId } from "./lbModel";
import { writeBackendPool, writeLoadBalancer } from "./lbWrites";
import { renderLoadBalancer, renderPool } from "./network";
import { CONTROL_API_VERSION, controlContext, type NetworkHost } from "./networkWrites";
import { referencingIpConfigurations } from "./poolReferences";
import type { PoolReferenceField } from "./poolReferenceIds";
import type { AppGatewayRecord, LoadBalancerRecord } from "./state";

type Mutate = (resource: JsonObject) => void;

function gatewayOfPool(host: NetworkHost, id: string): { agw: AppGatewayRecord; name: string } | undefined {
  const m = /^(.*\/applicationgateways\/[^/]+)\/backendaddresspools\/([^/]+)$/.exec(canonical(id));
  const agw = m?.[1] !== undefined ? host.state.appGateways.get(m[1]) : undefined;
  const pool = agw && gatewayPools(agw).find((p) => String(p["name"]).toLowerCase() === m?.[2]);
  return agw && pool ? { agw, name: String(pool["name"]) } : undefined;
}

function lbOfChild(
  host: NetworkHost,
  id: string,
): { lb: LoadBalancerRecord; collection: string; name: string } | undefined {
  const parsed = parseLbChildId(id);
  const lb = parsed ? host.state.loadBalancers.get(parsed.lbKey) : undefined;
  return lb && parsed ? { lb, collection: parsed.collection, name: parsed.name } : undefined;
}

/** A write as another writer to a load balancer, a backend pool or a gateway: `mutate` edits the resource as
 *  rendered, the result is PUT whole. Undefined when `id` is none of them. Refused writes throw the API's ArmError. */
export function writeNetworkAs(
  host: NetworkHost,
  id: string,
  mutate: Mutate,
  clientRequestId?: string,
  durationMs?: number,
): JsonObject | undefined {
  const opts = { ...(clientRequestId ? { clientRequestId } : {}), ...(durationMs !== undefined ? { durationMs } : {}) };
  const lb = host.state.loadBalancers.get(canonical(id));
  if (lb) {
    const draft = renderLoadBalancer(host.state, lb);
    mutate(draft);
    const out = writeLoadBalancer(
      host,
      lb.subscriptionId,
      lb.resourceGroup,
      lb.name,
      draft,
      controlContext(host, lb.id, opts),
    );
    return out.body;
  }
  const agw = host.state.appGateways.get(canonical(id));
  if (agw) {
    const draft = renderAppGateway(host, agw);
    mutate(draft);
    return writeAppGateway(
      host,
      agw.subscriptionId,
      agw.resourceGroup,
      agw.name,
      draft,
      controlContext(host, agw.id, opts),
    ).body;
  }
  const child = lbOfChild(host, id);
  if (child?.collection === "backendaddresspools") {
    const draft = renderPool(host.state, child.lb, child.name);
    if (!draft) return undefined;
    mutate(draft);
    return writeBackendPool(host, child.lb, child.name, draft, controlContext(host, id, opts)).body;
  }
  return undefined;
}

/** Changes another writer makes to a pool's addresses. Load balancer pools: `add` takes `{name, ipAddress,
 *  virtualNetwork? | subnet? (IDs), adminState?}` (an address of that name is replaced), `remove` names or IPs,
 *  `adminState` maps names to states. Gateway pools: `add` takes `{ipAddress} | {fqdn}`, `remove` IPs or FQDNs. */
export interface PoolAddressChange {
  add?: JsonObject[];
  remove?: string[];
  adminState?: Record<string, string>;
}

function lbAddressFrom(a: JsonObject): JsonObject {
  if (isJsonObject(a["properties"])) return structuredClone(a);
  const ref = (v: Json | undefined) => (typeof v === "string" ? { id: v } : v);
  const { name, ipAddress, virtualNetwork, subnet, adminState } = a;
  return {
    name: name ?? null,
    properties: {
      ipAddress: ipAddress ?? null,
      ...(virtualNetwork !== undefined ? { virtualNetwork: ref(virtualNetwork) ?? null } : {}),
      ...(subnet !== undefined ? { subnet: ref(subnet) ?? null } : {}),
      ...(adminState !== undefined ? { adminState } : {}),
    },
  };
}

const addressKeys = (a: Json): string[] =>
  [getPath(a, "name"), getPath(a, "properties", "ipAddress"), getPath(a, "ipAddress"), getPath(a, "fqdn")].filter(
    (k): k is string => typeof k === "string",
  );

/**
 * Another writer changes a pool's addresses with a PUT of the pool (load balancers) or of the gateway: `ifMatch`
 * makes it conditional; it meets the app's running operations (409) as the app meets its.
 */
export function writePoolAddressesAs(
  host: NetworkHost,
  poolId: string,
  change: PoolAddressChange,
  opts: { ifMatch?: string; clientRequestId?: string } = {},
): PoolStateView {
  const remove = new Set((change.remove ?? []).map((r) => r.toLowerCase()));
  const kept = (list: Json[]) => list.filter((a) => !addressKeys(a).some((k) => remove.has(k.toLowerCase())));
  const child = lbOfChild(host, poolId);
  if (child?.collection === "backendaddresspools") {
    const draft = renderPool(host.state, child.lb, child.name, CONTROL_API_VERSION);
    if (!draft) throw new Error(`no backend pool ${poolId}`);
    const props = draft["properties"] as JsonObject;
    let addresses = kept((props["loadBalancerBackendAddresses"] as Json[]) ?? []);
    for (const a of (change.add ?? []).map(lbAddressFrom)) {
      addresses = addresses.filter((x) => getPath(x, "name") !== a["name"]);
      addresses.push(a);
    }
    for (const [name, state] of Object.entries(change.adminState ?? {})) {
      const a = addresses.find((x) => String(getPath(x, "name")).toLowerCase() === name.toLowerCase());
      if (!isJsonObject(a)) throw new Error(`pool ${poolId} has no address named ${name}`);
      a["properties"] = { ...(isJsonObject(a["properties"]) ? a["properties"] : {}), adminState: state };
    }
    props["loadBalancerBackendAddresses"] = addresses;
    writeBackendPool(host, child.lb, child.name, draft, controlContext(host, poolId, opts));
    return poolState(host, poolId) as PoolStateView;
  }
  const gw = gatewayOfPool(host, poolId);
  if (gw) {
    const draft = renderAppGateway(host, gw.agw);
    const pool = (getPath(draft, "properties", "backendAddressPools") as JsonObject[]).find(
      (p) => String(p["name"]).toLowerCase() === gw.name.toLowerCase(),
    ) as JsonObject;
    const props = pool["properties"] as JsonObject;
    props["backendAddresses"] = [...kept((props["backendAddresses"] as Json[]) ?? []), ...(change.add ?? [])];
    writeAppGateway(
      host,
      gw.agw.subscriptionId,
      gw.agw.resourceGroup,
      gw.agw.name,
      draft,
      controlContext(host, gw.agw.id, opts),
    );
    return poolState(host, poolId) as PoolStateView;
  }
  throw new Error(`no backend pool ${poolId} of a load balancer or application gateway`);
}

/** Who and what is in a pool of any kind now, as the RP would show it. */
export interface PoolStateView {
  id: string;
  /** Which resource the pool belongs to. */
  kind: "loadBalancerBackendPool" | "inboundNatPool" | "applicationGatewayBackendPool";
  /** Load balancer backend pools: "ip" or "nic"; absent for an empty pool that is neither yet. */
  poolKind?: "ip" | "nic";
  /** The ETag a conditional write of the pool must carry (its load balancer's or gateway's). */
  etag: string;
  provisioningState: string;
  /** NRP writes running on the pool's load balancer or gateway. */
  running: { operationId: string; name: string }[];
  /** The ip configurations that are in the pool by reference (once their writes' operations ended). */
  ipConfigurations: string[];
  /** The pool's own addresses (IP-based load balancer pools; gateway pools' backendAddresses). */
  addresses: {
    name?: string;
    ipAddress?: string;
    fqdn?: string;
    virtualNetwork?: string;
    subnet?: string;
    adminState?: string;
  }[];
}

const members = (host: NetworkHost, id: string, field: PoolReferenceField) =>
  referencingIpConfigurations(host.state, id, field).map((r) => r.id);

function addressView(a: Json): PoolStateView["addresses"][number] {
  const p = isJsonObject(getPath(a, "properties"))
    ? (getPath(a, "properties") as JsonObject)
    : isJsonObject(a)
      ? a
      : {};
  const str = (v: Json | undefined) => (typeof v === "string" ? v : undefined);
  const out: PoolStateView["addresses"][number] = {};
  const fields = {
    name: str(getPath(a, "name")),
    ipAddress: str(p["ipAddress"]),
    fqdn: str(p["fqdn"]),
    virtualNetwork: str(getPath(p["virtualNetwork"], "id")),
    subnet: str(getPath(p["subnet"], "id")),
    adminState: str(p["adminState"]),
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k as keyof typeof fields] = v;
  return out;
}

export function poolState(host: NetworkHost, id: string): PoolStateView | undefined {
  const child = lbOfChild(host, id);
  if (child?.collection === "backendaddresspools") {
    const pool = child.lb.pools.find((p) => p.name.toLowerCase() === child.name);
    if (!pool) return undefined;
    const kind = effectivePoolKind(host.state, pool);
    return {
      id: pool.id,
      kind: "loadBalancerBackendPool",
      ...(kind ? { poolKind: kind } : {}),
      etag: child.lb.etag,
      provisioningState: pool.provisioningState ?? "Succeeded",
      running: host.nrpLocks.writesOn(child.lb.id),
      ipConfigurations: members(host, pool.id, "loadBalancerBackendAddressPools"),
      addresses: (pool.addresses ?? []).map(addressView),
    };
  }
  if (child?.collection === "inboundnatpools") {
    const nat = findNatPool(child.lb, child.name);
    if (!nat) return undefined;
    const natId = natPoolId(child.lb, String(nat["name"]));
    return {
      id: natId,
      kind: "inboundNatPool",
      etag: child.lb.etag,
      provisioningState: child.lb.provisioningState ?? "Succeeded",
      running: host.nrpLocks.writesOn(child.lb.id),
      ipConfigurations: members(host, natId, "loadBalancerInboundNatPools"),
      addresses: [],
    };
  }
  const gw = gatewayOfPool(host, id);
  if (gw) {
    const pool = gatewayPools(gw.agw).find((p) => String(p["name"]) === gw.name) as JsonObject;
    const poolId = gatewayPoolId(gw.agw, gw.name);
    const addresses = getPath(pool, "properties", "backendAddresses");
    return {
      id: poolId,
      kind: "applicationGatewayBackendPool",
      etag: gw.agw.etag,
      provisioningState: gw.agw.provisioningState,
      running: host.nrpLocks.writesOn(gw.agw.id),
      ipConfigurations: members(host, poolId, "applicationGatewayBackendAddressPools"),
      addresses: (Array.isArray(addresses) ? addresses : []).map(addressView),
    };
  }
  return undefined;
}

/** A gateway, a gateway pool or a NAT pool as rendered (load balancers and their backend pools: network.ts). */
export function renderNetworkResource(host: NetworkHost, id: string): JsonObject | undefined {
  const agw = host.state.appGateways.get(canonical(id));
  if (agw) return renderAppGateway(host, agw);
  const gw = gatewayOfPool(host, id);
  if (gw) {
    const pools = getPath(renderAppGateway(host, gw.agw), "properties", "backendAddressPools");
    return (Array.isArray(pools) ? pools : []).find((p) => String(getPath(p, "name")) === gw.name) as JsonObject;
  }
  const child = lbOfChild(host, id);
  if (child?.collection === "inboundnatpools") {
    const pools = getPath(renderLoadBalancer(host.state, child.lb), "properties", "inboundNatPools");
    return (Array.isArray(pools) ? pools : []).find((p) => String(getPath(p, "name")).toLowerCase() === child.name) as
      JsonObject | undefined;
  }
  return undefined;
}
