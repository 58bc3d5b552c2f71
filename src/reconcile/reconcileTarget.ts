import { declarationKey, type StoredDeclaration } from "../core/declarations";
import type { DeclarationStore } from "../core/ports";
import { parseBackendPoolId, type BackendPoolRef, type TargetRef } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { bindingAllows } from "./bindingGate";
import type { GatewayClaimStore } from "../core/gatewayPoolAddresses";
import { reconcileIpPools } from "./ipPools";
import type { PoolKindsKnown } from "./poolKindsKnown";
import type { PoolWrites } from "./poolWrites";
import { reconcileScaleSet } from "./reconcileScaleSet";
import { reconcileVm } from "./reconcileVm";
import { reporter, type ReconcileDeps, type ReconcileReport, type ReconcileTrigger } from "./vocabulary";
import { budgetOwed, payAhead } from "./writeBudget";
import { nextStep, reportFieldsOf, type ComeBack } from "./passResult";
import { CallStats } from "./callStats";

/**
 * A target's pass over every kind of pool (issue 43). Declarations into IP-based load balancer pools and into
 * Application Gateway pools that list addresses are written on the pools themselves (reconcile/ipPools.ts); all the
 * others (NIC-based backend pools, inbound NAT pools, gateway pools that ip configurations join) are references on the target's ip configurations, written by the scale set's or the VM's
 * own reconcile. Which a load balancer or gateway backend pool is, the pool says (reconcile/poolKindsKnown.ts).
 */

export interface PoolDeps {
  writes: PoolWrites;
  kinds: PoolKindsKnown;
  /** Each target's record of the addresses it added to Application Gateway pools. */
  claims?: GatewayClaimStore;
}

export async function reconcileTarget(
  ref: TargetRef,
  trigger: ReconcileTrigger,
  deps: ReconcileDeps & { pools?: PoolDeps },
): Promise<ReconcileReport> {
  const all = await deps.declarations.listForTarget(ref);
  // A pass sent back by a spent write budget takes that budget first: if it is still spent, it comes back unread.
  const owed = all.length > 0 ? budgetOwed(trigger.reason) : undefined;
  if (owed) {
    const paid = await payAhead(owed, deps);
    if ("comeBack" in paid) return cameBackUnread(ref, trigger, all.length, paid.comeBack, deps);
    deps = { ...deps, credit: paid.credit };
  }
  const references = (d: ReconcileDeps) =>
    ref.kind === "vm" ? reconcileVm(ref, trigger, d) : reconcileScaleSet(ref, trigger, d);
  const pools = deps.pools;
  if (!pools) return references(deps);
  const readable: Array<{ d: StoredDeclaration; pool: BackendPoolRef }> = [];
  for (const d of all) {
    const pool = parseBackendPoolId(d.backendPoolId);
    // Refusals (bad ID, scopes, bindings) are the references pass's to record; nothing is read for them.
    if (!pool.ok || pool.value.poolKind === "inboundNatPool") continue;
    if (!inScopes(deps.config.scopes, pool.value.subscriptionId, pool.value.resourceGroup)) continue;
    if (!bindingAllows(deps.config.bindings, ref.id, pool.value.id)) continue;
    readable.push({ d, pool: pool.value });
  }
  const kinds = await pools.kinds.ipBasedOfEach(
    readable.map((r) => r.pool),
    deps.network,
    deps.log,
  );
  const ip = new Set<string>();
  const adminOnNic = new Set<string>();
  for (const { d, pool } of readable) {
    if (kinds.get(pool.key) === true) ip.add(declarationKey(d));
    else if (d.adminState !== undefined && d.state === "present") adminOnNic.add(declarationKey(d));
  }
  if (ip.size === 0 && adminOnNic.size === 0) return references(deps);
  const mine = (keys: Set<string>) => all.filter((d) => keys.has(declarationKey(d)));
  const ipReport = await reconcileIpPools(ref, trigger, mine(ip), mine(adminOnNic), { ...deps, pools });
  if (ip.size + adminOnNic.size === all.length) return ipReport;
  const taken = new Set([...ip, ...adminOnNic]);
  const rest = await references({ ...deps, declarations: without(deps.declarations, taken) });
  return merged(rest, ipReport);
}

/** The report of a pass that came back before reading anything: no ARM call, its come-back as the next step. */
function cameBackUnread(
  ref: TargetRef,
  trigger: ReconcileTrigger,
  declarations: number,
  later: ComeBack,
  deps: ReconcileDeps,
): ReconcileReport {
  const step = nextStep([later], trigger.attempt, deps.config.maxAttempts);
  return reporter(ref, trigger, new CallStats(), deps, () => 0)("requeued", declarations, reportFieldsOf(step));
}

/** The target's declarations less those another part of the pass serves. */
function without(store: DeclarationStore, keys: ReadonlySet<string>): DeclarationStore {
  const keep = (d: StoredDeclaration) => !keys.has(declarationKey(d));
  return {
    upsert: (t, d, listed) => store.upsert(t, d, listed),
    listForTarget: async (t) => (await store.listForTarget(t)).filter(keep),
    recordOutcome: (t, d, o) => store.recordOutcome(t, d, o),
    remove: (t, d) => store.remove(t, d),
  };
}

/**
 * One report for the pass: the references' (its result and next step decide; the pool part's requeue when it has
 * none), with the pool writes' calls added.
 */
function merged(main: ReconcileReport, pools: ReconcileReport): ReconcileReport {
  const applied = main.result === "unchanged" && pools.result === "applied";
  return {
    ...main,
    ...(applied ? { result: "applied" as const } : {}),
    declarations: main.declarations + pools.declarations,
    armReads: main.armReads + pools.armReads,
    armWrites: main.armWrites + pools.armWrites,
    preconditionFailures: main.preconditionFailures + pools.preconditionFailures,
    throttles: main.throttles + pools.throttles,
    ...(main.requeueAfterMs === undefined && pools.requeueAfterMs !== undefined
      ? {
          requeueAfterMs: pools.requeueAfterMs,
          reason: pools.reason ?? main.reason,
          ...(pools.requeueWaits ? { requeueWaits: true as const } : {}),
        }
      : {}),
  };
}
