// What NRP refuses in the pool references of a scale set model, an instance or a NIC: an inbound NAT pool or an
// application gateway pool that does not exist (400 InvalidResourceReference, as for a load balancer pool), and an
// ip configuration joining an IP-based load balancer pool (one pool cannot mix both kinds).
import { ArmError, invalidReference } from "./errors";
import { canonical } from "./ids";
import type { Json } from "./json";
import { declaredPoolKind } from "./poolKinds";
import { referencedIds, type PoolReferenceField } from "./poolReferenceIds";
import type { SimState } from "./state";

/** The inbound NAT pool with this ID, if its load balancer has it. */
export function natPoolExists(state: SimState, id: string): boolean {
  const m = /^(.*\/loadbalancers\/[^/]+)\/inboundnatpools\/([^/]+)$/.exec(canonical(id));
  const lb = m?.[1] !== undefined ? state.loadBalancers.get(m[1]) : undefined;
  return (lb?.natPools ?? []).some((p) => String(p["name"] ?? "").toLowerCase() === m?.[2]);
}

/** The application gateway backend pool with this ID, if its gateway has it. */
export function appGatewayPoolExists(state: SimState, id: string): boolean {
  const m = /^(.*\/applicationgateways\/[^/]+)\/backendaddresspools\/([^/]+)$/.exec(canonical(id));
  const agw = m?.[1] !== undefined ? state.appGateways.get(m[1]) : undefined;
  const pools = agw?.body["properties"];
  const list = pools && typeof pools === "object" && !Array.isArray(pools) ? pools["backendAddressPools"] : undefined;
  return Array.isArray(list) && list.some((p) => String((p as { name?: Json }).name ?? "").toLowerCase() === m?.[2]);
}

/** `why` completes "…cannot hold both IP-based addresses and ip configurations: ". */
export const cannotMixPoolKinds = (poolId: string, why: string): ArmError =>
  new ArmError(400, {
    error: {
      // The code is NRP's (terraform-provider-azurerm issue 25962); the message is not public, so it is chosen.
      code: "CannotMixIPBasedAddressesAndIPConfigurationsOnLoadBalancerBackendAddressPool",
      message: `Load balancer backend address pool ${poolId} cannot hold both IP-based addresses and ip configurations of network interfaces: ${why}.`,
    },
  });

/**
 * The first refused reference among the ip configurations' pool references (`fields`), or undefined. Load balancer
 * pools must exist (checked by the callers as before) and must not be IP-based; NAT and gateway pools must exist.
 */
export function poolReferenceError(
  state: SimState,
  ipcs: { ipc: Json; id: string }[],
  byId: string,
  fields: readonly PoolReferenceField[],
): ArmError | undefined {
  for (const { ipc, id } of ipcs) {
    for (const field of fields) {
      for (const ref of referencedIds(ipc, field)) {
        if (field === "loadBalancerInboundNatPools" && !natPoolExists(state, ref)) return invalidReference(ref, byId);
        if (field === "applicationGatewayBackendAddressPools" && !appGatewayPoolExists(state, ref))
          return invalidReference(ref, byId);
        if (field === "loadBalancerBackendAddressPools") {
          const found = state.pool(ref);
          if (found && declaredPoolKind(found.pool) === "ip")
            return cannotMixPoolKinds(found.pool.id, `it is IP-based, and ip configuration ${id} references it`);
        }
      }
    }
  }
  return undefined;
}
