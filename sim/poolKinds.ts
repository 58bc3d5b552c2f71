// What kind a load balancer backend pool is. Azure has no property that says it for a legacy pool: an IP-based pool
// lists addresses itself (`loadBalancerBackendAddresses[].properties.ipAddress`), a NIC-based pool is joined by ip
// configurations, an empty pool is neither until its first member comes, and one pool cannot hold both
// (learn.microsoft.com "Backend pool management", Limitations; NRP's
// `CannotMixIPBasedAddressesAndIPConfigurationsOnLoadBalancerBackendAddressPool`, terraform-provider-azurerm issue
// 25962). From 2023-05-01 a pool may say so itself: `syncMode` `Manual` (IP-based) or `Automatic` (NIC-based, NRP
// keeps the addresses; azure-cli issue 27090).
import { getPath, type JsonObject } from "./json";
import type { PoolRecord } from "./state";

export type PoolKind = "nic" | "ip";

/** An address entry that names an IP (not one NRP derived from a NIC). */
export function isIpAddressEntry(a: JsonObject): boolean {
  return typeof getPath(a, "properties", "ipAddress") === "string";
}

/** The kind a pool's own record commits it to: declared, by `syncMode`, or by the addresses it lists. */
export function declaredPoolKind(pool: PoolRecord): PoolKind | undefined {
  if (pool.kind) return pool.kind;
  const sync = String(getPath(pool.properties, "syncMode") ?? "").toLowerCase();
  if (sync === "manual") return "ip";
  if (sync === "automatic") return "nic";
  return (pool.addresses ?? []).some(isIpAddressEntry) ? "ip" : undefined;
}
