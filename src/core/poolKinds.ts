import type { PoolKind, TargetRef } from "./resourceIds";

/**
 * Where an ip configuration references a pool of each kind (Azure's property names, the same on a scale set's NIC
 * configurations, an instance's and a NIC resource's). A pool ID says its kind (core/resourceIds.ts).
 */
export const POOL_FIELDS = {
  loadBalancerBackendPool: "loadBalancerBackendAddressPools",
  inboundNatPool: "loadBalancerInboundNatPools",
  applicationGatewayBackendPool: "applicationGatewayBackendAddressPools",
} as const satisfies Record<PoolKind, string>;

export type PoolField = (typeof POOL_FIELDS)[PoolKind];

const NAT_POOL = /\/providers\/microsoft\.network\/loadbalancers\/[^/]+\/inboundnatpools\/[^/]+$/i;
const GATEWAY_POOL = /\/providers\/microsoft\.network\/applicationgateways\/[^/]+\/backendaddresspools\/[^/]+$/i;

/** The kind of pool an ID names (anything else, as before issue 43, a load balancer's backend pool). */
export function poolKindOfId(poolId: string): PoolKind {
  if (NAT_POOL.test(poolId)) return "inboundNatPool";
  if (GATEWAY_POOL.test(poolId)) return "applicationGatewayBackendPool";
  return "loadBalancerBackendPool";
}

export const poolFieldOf = (poolId: string): PoolField => POOL_FIELDS[poolKindOfId(poolId)];

/** How each kind is named to people (status page, CLI, reasons). */
export const POOL_KIND_WORDS: Record<PoolKind, string> = {
  loadBalancerBackendPool: "load balancer backend pool",
  inboundNatPool: "inbound NAT pool",
  applicationGatewayBackendPool: "application gateway backend pool",
};

/** Admin state of a load balancer backend address (issue 43); `Drain` only at some api-versions. */
export const ADMIN_STATES = ["None", "Up", "Down", "Drain"] as const;
export type AdminState = (typeof ADMIN_STATES)[number];

/**
 * The Network api-version poolsync speaks (@azure/arm-network 39's): what it decides which admin states exist. Held
 * equal to the SDK's by test/core/poolKinds.test.ts.
 */
export const NETWORK_API_VERSION = "2026-01-01";

/**
 * The admin states a Network api-version lists (Microsoft.Network loadBalancer.json; sim/README.md's table): none
 * before 2022-01-01, `Drain` only from 2022-01-01 to 2022-09-01, `None`/`Up`/`Down` from then on.
 */
export function adminStatesAt(apiVersion: string): readonly AdminState[] {
  if (apiVersion < "2022-01-01") return [];
  if (apiVersion <= "2022-09-01") return ADMIN_STATES;
  return ["None", "Up", "Down"];
}

/** A declaration's fields that only some pool kinds take, checked against the pool's and the target's kinds. */
export interface KindFields {
  target: Pick<TargetRef, "kind">;
  poolKind: PoolKind;
  state: "present" | "absent";
  adminState?: AdminState | undefined;
  adminInstances?: readonly string[] | undefined;
  movedTo?: string | undefined;
}

/**
 * Why these fields do not go together (field and reason), or undefined. What the IDs alone tell: whether a load
 * balancer backend pool is IP-based is found out from the pool by the reconcile, which fails an `adminState` on a
 * NIC-based one with the reason.
 */
export function kindProblem(f: KindFields): { field: string; reason: string } | undefined {
  if (f.poolKind === "inboundNatPool" && f.target.kind === "vm")
    return {
      field: "backendPoolId",
      reason:
        "an inbound NAT pool is joined only by a scale set's ip configurations (a VM's NIC takes inbound NAT rules instead): declare the scale set",
    };
  if (f.adminState !== undefined) {
    if (f.poolKind !== "loadBalancerBackendPool")
      return {
        field: "adminState",
        reason: `Azure has no admin state for the members of an ${POOL_KIND_WORDS[f.poolKind]}: only an IP-based load balancer backend pool's addresses have one`,
      };
    if (f.state !== "present") return { field: "adminState", reason: 'applies to a "present" membership only' };
    const known = adminStatesAt(NETWORK_API_VERSION);
    if (!known.includes(f.adminState))
      return {
        field: "adminState",
        reason: `"${f.adminState}" is not an admin state of Network api-version ${NETWORK_API_VERSION}, which poolsync speaks: it has ${known.join(", ")} (Drain was in 2022-01-01 … 2022-09-01 only)`,
      };
  }
  if (f.adminInstances !== undefined) {
    if (f.adminState === undefined)
      return { field: "instances", reason: "names the members adminState applies to: give adminState too" };
    if (f.target.kind === "vm") return { field: "instances", reason: "a VM target has no instances" };
  }
  if (f.movedTo !== undefined && f.state !== "absent")
    return { field: "movedTo", reason: 'is the other half of a move: only an "absent" declaration has it' };
  return undefined;
}
