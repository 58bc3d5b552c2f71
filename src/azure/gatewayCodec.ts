import { NotFoundError } from "../core/errors";
import type { BackendPoolModel, PoolAddress } from "../core/models";
import { ipBasedOf } from "./poolCodec";

/**
 * An Application Gateway backend pool between ARM's shapes and poolsync's (issue 43). The pool has no endpoint of its
 * own: it is read from its gateway and written with a PUT of the whole gateway, If-Match on the gateway's ETag. Its
 * `backendAddresses` are an IP (`ipAddress`) or an FQDN (`fqdn`) with no name: they are read with an empty name, an
 * FQDN carried untouched, and named from the target's claims by the pool writer (core/gatewayPoolAddresses.ts).
 */

type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const flat = (v: unknown): Json => {
  const o = obj(v);
  const out = { ...o, ...obj(o["properties"]) };
  delete out["properties"];
  return out;
};

function poolsOf(gateway: Json): Json[] {
  const list = flat(gateway)["backendAddressPools"];
  return Array.isArray(list) ? list.map(flat) : [];
}

const samePool = (p: Json, name: string) => (str(p["name"]) ?? "").toLowerCase() === name.toLowerCase();

function addressFromArm(entry: Json): PoolAddress {
  const e = flat(entry);
  const { ipAddress, ...rest } = e;
  return {
    name: "",
    ...(str(ipAddress) ? { ipAddress: str(ipAddress) } : {}),
    ...(Object.keys(rest).length > 0 ? { rest } : {}),
  };
}

/**
 * The gateway's pool `poolName` as a pool poolsync writes, with the gateway's ETag; NotFoundError when the gateway has
 * no such pool. A pool lists addresses by the same rule as a classic load balancer pool (poolCodec's `ipBasedOf`):
 * ip configurations that reference it make it NIC-based; addresses (an IP, or an FQDN) and no such reference make it
 * address-based; an empty pool says nothing yet (the first ip configuration poolsync joins to it decides).
 */
export function gatewayPoolFromArm(gateway: Json, poolName: string, poolId: string): BackendPoolModel {
  const pool = poolsOf(gateway).find((p) => samePool(p, poolName));
  if (!pool) throw new NotFoundError(`application gateway ${str(gateway["id"]) ?? ""} has no backend pool ${poolName}`);
  const list = pool["backendAddresses"];
  const addresses = Array.isArray(list) ? list.map((e) => addressFromArm(obj(e))) : [];
  return {
    id: str(pool["id"]) ?? poolId,
    etag: str(gateway["etag"]) ?? "",
    provisioningState: str(flat(gateway)["provisioningState"]),
    ipBased: ipBasedOf(pool, addresses) ?? (addresses.length > 0 ? true : undefined),
    addresses,
    pool,
    gateway,
  };
}

/** A gateway address as the SDK's model takes it: the IP (or whatever else was read), never a name. */
const addressToArm = (a: PoolAddress): Json => ({
  ...(a.rest ?? {}),
  ...(a.ipAddress !== undefined ? { ipAddress: a.ipAddress } : {}),
});

/** The gateway as read, with the pool's addresses replaced: a gateway PUT replaces it whole. */
export function gatewayWithAddresses(gateway: Json, poolName: string, addresses: readonly PoolAddress[]): Json {
  const pools = gateway["backendAddressPools"];
  if (!Array.isArray(pools)) throw new Error("the gateway as read lists no backend pools");
  return {
    ...gateway,
    backendAddressPools: pools.map((p: unknown) =>
      samePool(obj(p), poolName) ? { ...obj(p), backendAddresses: addresses.map(addressToArm) } : p,
    ),
  };
}
