import type { BackendPoolModel, PoolAddress } from "../core/models";

/**
 * A load balancer backend pool between ARM's shapes and poolsync's (issue 43). The Network SDK hands a GET over
 * flattened (`loadBalancerBackendAddresses` on the pool, `ipAddress` on each entry), a write's raw answer as on the
 * wire (each under `properties`): both read alike. Every field of an address poolsync does not own is kept and
 * written back as it was read.
 */

type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const idOf = (v: unknown): string | undefined => str(obj(v)["id"]);

/** Fields of an address poolsync reads itself; every other one is carried in `rest`. */
const OWN = new Set(["name", "ipAddress", "subnet", "virtualNetwork", "adminState", "networkInterfaceIPConfiguration"]);
/** Read-only fields NRP fills in: never sent back. */
const READ_ONLY = new Set(["inboundNatRulesPortMapping", "id", "etag", "type", "provisioningState"]);

export function addressFromArm(entry: Json): PoolAddress {
  const props = { ...entry, ...obj(entry["properties"]) };
  delete props["properties"];
  const rest: Json = {};
  for (const [k, v] of Object.entries(props)) if (!OWN.has(k) && !READ_ONLY.has(k)) rest[k] = v;
  return {
    name: str(props["name"]) ?? "",
    ...(str(props["ipAddress"]) ? { ipAddress: str(props["ipAddress"]) } : {}),
    ...(idOf(props["subnet"]) ? { subnetId: idOf(props["subnet"]) } : {}),
    ...(idOf(props["virtualNetwork"]) ? { virtualNetworkId: idOf(props["virtualNetwork"]) } : {}),
    ...(str(props["adminState"]) ? { adminState: str(props["adminState"]) } : {}),
    ...(idOf(props["networkInterfaceIPConfiguration"]) ? { fromNic: true } : {}),
    ...(Object.keys(rest).length > 0 ? { rest } : {}),
  };
}

/** The address as the SDK's flattened model takes it. */
export function poolAddressToArm(a: PoolAddress): Json {
  return {
    ...(a.rest ?? {}),
    name: a.name,
    ...(a.ipAddress !== undefined ? { ipAddress: a.ipAddress } : {}),
    ...(a.subnetId !== undefined ? { subnet: { id: a.subnetId } } : {}),
    ...(a.virtualNetworkId !== undefined ? { virtualNetwork: { id: a.virtualNetworkId } } : {}),
    ...(a.adminState !== undefined ? { adminState: a.adminState } : {}),
  };
}

/**
 * What the pool says of its own kind (Azure has no property for a classic pool's): `syncMode` (from 2023-05-01), else
 * its members: addresses that name an IP make it IP-based, ip configurations that joined it NIC-based; an empty pool
 * without `syncMode` says nothing yet.
 */
export function ipBasedOf(props: Json, addresses: readonly PoolAddress[]): boolean | undefined {
  const sync = (str(props["syncMode"]) ?? "").toLowerCase();
  if (sync === "manual") return true;
  if (sync === "automatic") return false;
  const configurations = props["backendIPConfigurations"];
  if (Array.isArray(configurations) && configurations.length > 0) return false;
  if (addresses.some((a) => a.fromNic)) return false;
  if (addresses.some((a) => a.ipAddress !== undefined)) return true;
  return undefined;
}

export function poolFromArm(pool: Json, fallbackId: string): BackendPoolModel {
  const props = { ...pool, ...obj(pool["properties"]) };
  delete props["properties"];
  const list = props["loadBalancerBackendAddresses"];
  const addresses = Array.isArray(list) ? list.map((e) => addressFromArm(obj(e))) : [];
  return {
    id: str(pool["id"]) ?? fallbackId,
    etag: str(pool["etag"]) ?? "",
    provisioningState: str(props["provisioningState"]),
    ipBased: ipBasedOf(props, addresses),
    addresses,
    pool: props,
  };
}
