// The three ways an ip configuration joins a pool by reference, and the pool IDs it names in each.
import { getPath, type Json } from "./json";

export type PoolReferenceField =
  "loadBalancerBackendAddressPools" | "loadBalancerInboundNatPools" | "applicationGatewayBackendAddressPools";

export const POOL_REFERENCE_FIELDS: readonly PoolReferenceField[] = [
  "loadBalancerBackendAddressPools",
  "loadBalancerInboundNatPools",
  "applicationGatewayBackendAddressPools",
];

export function referencedIds(ipc: Json | undefined, field: PoolReferenceField): string[] {
  const v = getPath(ipc, "properties", field);
  if (!Array.isArray(v)) return [];
  return v.map((r) => getPath(r, "id")).filter((id): id is string => typeof id === "string");
}
