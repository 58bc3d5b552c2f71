import {
  declarationKey,
  finishes,
  ipSelectorText,
  selectorOf,
  type Outcome,
  type StoredDeclaration,
} from "../core/declarations";
import {
  claimsDropped,
  claimsKeptBy,
  claimsUnder,
  doubtOf,
  sameClaims,
  settleDoubt,
  type GatewayClaim,
  type GatewayClaimStore,
  type GatewayDoubt,
} from "../core/gatewayPoolAddresses";
import {
  declarationAddressPrefix,
  targetAddressPrefix,
  wantedAddresses,
  contributionHeld,
  type Contribution,
  type PoolMember,
} from "../core/ipPoolAddresses";
import { isDeleting, type BackendPoolModel, type PoolAddress, type ScaleSetModel, type VmModel } from "../core/models";
import type { CachedEntry, ComputePort, NetworkPort } from "../core/ports";
import {
  parseBackendPoolId,
  sameResource,
  type BackendPoolRef,
  type ScaleSetRef,
  type TargetRef,
} from "../core/resourceIds";
import { BeingDeletedError } from "../core/errors";
import { mapLimit } from "../core/retryPolicy";
import { UNKNOWN_WRITER, type Drift } from "../core/drift";
import { activeDeclarations } from "./activeDeclarations";
import { CallStats } from "./callStats";
import { OutcomeRecorder } from "./recordOutcomes";
import { settleStop } from "./passStop";
import { orchestrationModeOf } from "./vmMembership";
import { checkedNicRefs } from "./vmNics";
import type { PoolWrites, PoolWriteResult } from "./poolWrites";
import { nextStep, reportFieldsOf } from "./passResult";
import {
  doubtHold,
  doubtHoldMs,
  reporter,
  type ReconcileDeps,
  type ReconcileReport,
  type ReconcileTrigger,
} from "./vocabulary";

/**
 * A target's declarations into IP-based load balancer pools and Application Gateway pools that list addresses (issue
 * 43): the pool lists the members' addresses itself, so the pass reads the target's members (a Uniform scale set's
 * instances through Network RP's scale set NIC list, a Flexible scale set's or a VM's NIC resources), works out the
 * addresses each declaration wants, and hands them to the pool's coalesced writer (reconcile/poolWrites.ts), which
 * writes the pool with If-Match on its load balancer's ETag (a gateway pool: the whole gateway, If-Match on the
 * gateway's, with the target's record of the addresses it added, since a gateway's addresses carry no name). Each
 * declaration's outcome is judged on the pool as that write answered it (or as read, when nothing needed writing):
 * ARM's word from this pass, never a cached row. New and gone instances follow on the next pass: the instance events
 * and the timer bring it.
 */

export interface IpPoolDeps extends ReconcileDeps {
  /** `claims`: each target's record of the addresses it added to Application Gateway pools (none: not written). */
  pools: { writes: PoolWrites; claims?: GatewayClaimStore };
}

/**
 * Long: the pool pass's steps share its outcome recorder and the pools already written (a move's removal waits for its
 * new pool).
 */
export async function reconcileIpPools(
  ref: TargetRef,
  trigger: ReconcileTrigger,
  declarations: StoredDeclaration[],
  /** Declarations with an admin state whose pool turned out NIC-based: they fail with the reason. */
  adminOnNicPools: StoredDeclaration[],
  deps: IpPoolDeps,
): Promise<ReconcileReport> {
  const stats = new CallStats();
  const compute = stats.wrap(deps.compute);
  const network = stats.wrapNetwork(deps.network);
  const report = reporter(ref, trigger, stats, deps, () => 0);
  const outcomes = new OutcomeRecorder(ref, deps.declarations, deps.clock);
  const failed = (reason: string) => outcomes.failed(reason, deps.config.failedRetryMs);
  const total = declarations.length + adminOnNicPools.length;
  for (const d of adminOnNicPools)
    await outcomes.record(
      d,
      failed(
        `adminState: ${d.backendPoolId} is not an IP-based pool: Azure's API gives admin state only to the addresses an IP-based pool lists (give the pool syncMode Manual, or declare without adminState)`,
      ),
    );
  const { active } = await activeDeclarations(ref, declarations, outcomes, deps.config, deps.clock.now());
  if (active.length === 0) return report(adminOnNicPools.length > 0 ? "failed" : "refused", total);
  try {
    const members = await membersOf(ref, compute, network, deps);
    const byPool = new Map<string, { pool: BackendPoolRef; ds: StoredDeclaration[] }>();
    for (const d of active) {
      const pool = parseBackendPoolId(d.backendPoolId);
      if (!pool.ok) continue; // refused by activeDeclarations
      const entry = byPool.get(pool.value.key) ?? { pool: pool.value, ds: [] };
      entry.ds.push(d);
      byPool.set(pool.value.key, entry);
    }
    // A move's removal waits for the pool it moves to: pools with no such removal are written first.
    const movesOut = (e: { ds: StoredDeclaration[] }) => e.ds.some((d) => d.movedTo !== undefined);
    const ordered = [...byPool.values()].sort((a, b) => Number(movesOut(a)) - Number(movesOut(b)));
    const after = new Map<string, BackendPoolModel>();
    let written = 0;
    let doubt = 0;
    for (const { pool, ds } of ordered) {
      const shares = ds.map((d) => shareOf(ref, d, members, after));
      const usable = shares.filter((s): s is Share & { contribution: Contribution } => s.contribution !== undefined);
      for (const s of shares) if (s.problem) await outcomes.record(s.d, failed(s.problem));
      if (usable.length === 0) continue;
      const record = await gatewayRecord(ref, pool, deps);
      const result = await deps.pools.writes.submit(pool, {
        targetKey: ref.key,
        contributions: usable.map((s) => s.contribution),
        ...(deps.lease ? { lease: deps.lease } : {}),
        log: deps.log,
        ...(deps.doubts ? { doubts: deps.doubts } : {}),
        ...(deps.events ? { events: deps.events } : {}),
        ...(record
          ? {
              claimed: record.claims,
              ...(record.doubt ? { doubt: record.doubt } : {}),
              beforeGatewayWrite: record.beforeWrite,
              gatewayWriteRefused: record.refused,
              gatewayWriteInDoubt: record.inDoubt,
            }
          : {}),
      });
      if ("comeBack" in result)
        return settleStop(
          { comeBack: result.comeBack },
          { target: ref, trigger, active, declarations: total, outcomes, report },
          deps,
        );
      await record?.afterWrite(result.model);
      countCalls(stats, result);
      if (result.wrote) written++;
      after.set(pool.key, result.model);
      // A pool write of ours that may still land (its load balancer keeps the ETag it was made on) holds back every
      // finish judged on this pool until it cannot.
      const poolDoubt = doubtHoldMs(deps, [{ id: pool.id, etag: result.model.etag }]);
      doubt = Math.max(doubt, poolDoubt);
      await mapLimit(usable, 8, async (s) => {
        const held = contributionHeld(result.model.addresses, s.contribution);
        if (!held) return outcomes.record(s.d, failed(notHeldReason(pool, s)));
        await noteDrift(ref, s, result, deps);
        const next = appliedOn(s.d, result.model, s.unplacedReason);
        if (poolDoubt > 0 && finishes(s.d, next)) return;
        return outcomes.record(s.d, next);
      });
    }
    const step = nextStep([doubtHold(doubt)], trigger.attempt, deps.config.maxAttempts);
    return report(written > 0 ? "applied" : "unchanged", total, reportFieldsOf(step));
  } catch (err) {
    return settleStop({ error: err }, { target: ref, trigger, active, declarations: total, outcomes, report }, deps);
  }
}

/**
 * The target's record of what it added to an Application Gateway pool (core/gatewayPoolAddresses.ts), and its two
 * updates around a write: claims the write removes are dropped before it is sent, the addresses it added are claimed
 * once the gateway answered it. Undefined for a load balancer's pool, whose addresses carry poolsync's names.
 */
async function gatewayRecord(ref: TargetRef, pool: BackendPoolRef, deps: IpPoolDeps) {
  if (pool.poolKind !== "applicationGatewayBackendPool") return undefined;
  const store = deps.pools.claims;
  if (!store)
    throw new Error("no record of gateway addresses is configured: a gateway pool's addresses are not written");
  const read = await store.read(ref, pool.key);
  let claims: readonly GatewayClaim[] = read.claims;
  let doubt: GatewayDoubt | undefined = read.doubt;
  const save = async (next: readonly GatewayClaim[], nextDoubt: GatewayDoubt | undefined) => {
    if (sameClaims(next, claims) && nextDoubt === doubt) return;
    await store.write(ref, pool.key, { claims: [...next], ...(nextDoubt ? { doubt: nextDoubt } : {}) });
    claims = next;
    doubt = nextDoubt;
  };
  const prefix = targetAddressPrefix(ref.key);
  // The claims the write being sent dropped: given back if the gateway refused it, kept with its doubt if no answer came.
  let released: GatewayClaim[] = [];
  return {
    claims,
    ...(doubt ? { doubt } : {}),
    beforeWrite: async (addresses: readonly PoolAddress[]) => {
      const kept = claimsKeptBy(claims, addresses);
      released = [...released, ...claimsDropped(claims, kept)];
      await save(kept, doubt);
    },
    refused: async () => {
      await save([...claims, ...released], doubt);
      released = [];
    },
    inDoubt: (addresses: readonly PoolAddress[], ifMatch: string) =>
      save(claims, doubtOf(ifMatch, addresses, prefix, released)),
    // A doubt stays while the gateway keeps the ETag its write was conditional on (it may still land); once the ETag
    // moved, its claims were taken if the pool showed it landed (poolWrites), and it is done with.
    afterWrite: (model: BackendPoolModel) =>
      save(
        claimsUnder(model.addresses, prefix),
        doubt && settleDoubt(doubt, model).kind === "pending" ? doubt : undefined,
      ),
  };
}

interface Share {
  d: StoredDeclaration;
  contribution?: Contribution;
  /** Why it cannot be written at all. */
  problem?: string;
  /** Members it could not be placed on (it is written for the others). */
  unplacedReason?: string;
}

function shareOf(
  target: TargetRef,
  d: StoredDeclaration,
  members: readonly PoolMember[],
  after: ReadonlyMap<string, BackendPoolModel>,
): Share {
  const selectorText = ipSelectorText(d);
  const prefix = declarationAddressPrefix(target.key, selectorText);
  const { wanted, unplaced } = wantedAddresses(
    prefix,
    {
      selector: selectorOf(d),
      selectorText,
      state: d.state,
      adminState: d.adminState,
      adminInstances: d.adminInstances,
    },
    members,
  );
  const placed = unplaced.filter((u) => !/has no private IP address yet/.test(u.reason));
  const unplacedReason =
    placed.length > 0
      ? `${placed.length} of ${members.length} member(s) have no such ip configuration: ${placed[0]!.member}: ${placed[0]!.reason}`
      : undefined;
  if (d.state === "present" && placed.length === members.length && members.length > 0)
    return { d, problem: unplacedReason ?? "no member has that ip configuration" };
  if (d.movedTo === undefined)
    return { d, contribution: { prefix, wanted }, ...(unplacedReason ? { unplacedReason } : {}) };
  // A move's removal: only the members whose address the pool moved to now holds (as this pass wrote or read it).
  const moved = parseBackendPoolId(d.movedTo);
  const there = moved.ok ? after.get(moved.value.key) : undefined;
  if (!there)
    return {
      d,
      problem: `the move to ${d.movedTo} is not one this pass writes: a move between an IP-based pool and a pool of another kind is two declarations (present first, then absent)`,
    };
  const inNew = new Set(there.addresses.map((a) => (a.ipAddress ?? "").toLowerCase()));
  return {
    d,
    contribution: { prefix, wanted: [], removable: (a) => inNew.has((a.ipAddress ?? "").toLowerCase()) },
  };
}

function appliedOn(d: StoredDeclaration, pool: BackendPoolModel, unplacedReason?: string): Omit<Outcome, "at"> {
  if (unplacedReason) return { kind: "failed", reason: unplacedReason };
  return {
    kind: "applied",
    via: "pool",
    appliedEtag: pool.etag,
    ...(d.state === "absent" ? { appliedEverywhere: true } : {}),
  };
}

function notHeldReason(pool: BackendPoolRef, s: Share): string {
  if (s.d.movedTo !== undefined) return `the move keeps its addresses in ${pool.id} until ${s.d.movedTo} holds them`;
  return `${pool.id} does not hold this declaration's addresses as declared after the write (another writer lists one of them with another admin state?)`;
}

function countCalls(stats: CallStats, r: PoolWriteResult): void {
  if (!r.calls) return;
  stats.reads += r.calls.reads;
  stats.writes += r.calls.writes;
  stats.preconditionFailures += r.calls.preconditionFailures;
  stats.throttles += r.calls.throttles;
}

/**
 * A declaration applied before that the pool no longer held as declared when read (an address removed, an admin state
 * set back): recorded as its drift, repaired by this write. Who wrote the pool is unknown: its events name the pool,
 * which no target's rows hold.
 */
async function noteDrift(ref: TargetRef, s: Share, result: PoolWriteResult, deps: IpPoolDeps): Promise<void> {
  if (s.d.outcome.kind !== "applied" || !s.contribution) return;
  if (contributionHeld(result.before.addresses, s.contribution)) return;
  const now = new Date(deps.clock.now()).toISOString();
  const drift: Drift = {
    at: now,
    by: UNKNOWN_WRITER,
    operation: result.model.gateway
      ? "Microsoft.Network/applicationGateways/write"
      : "Microsoft.Network/loadBalancers/backendAddressPools/write",
    correlationId: "",
    source: "timer",
    repairedAt: now,
    resourceKind: "pool",
    resourceId: result.model.id,
  };
  await deps.drift?.drifts.record(ref, declarationKey(s.d), drift);
  deps.events?.emit({ kind: "drift", backendPoolId: s.d.backendPoolId, ipConfiguration: s.d.ipConfiguration, drift });
  deps.log.warn("drift", {
    targetId: ref.id,
    backendPoolId: s.d.backendPoolId,
    ipConfiguration: s.d.ipConfiguration,
    state: s.d.state,
    ...drift,
  });
}

/** The target's members with their NICs as ARM answers them now. */
async function membersOf(
  ref: TargetRef,
  compute: ComputePort,
  network: NetworkPort,
  deps: IpPoolDeps,
): Promise<PoolMember[]> {
  if (ref.kind === "vm") return [await vmMember(await compute.getVm(ref), network, deps)];
  const model = await scaleSetModel(ref, compute, deps);
  if (isDeleting(model.provisioningState)) throw new BeingDeletedError(`${ref.id} is being deleted`);
  if (orchestrationModeOf(model) === "Flexible") {
    const vms = (await compute.listVms(ref)).filter((v) => v.scaleSetId && sameResource(v.scaleSetId, ref.id));
    const members: PoolMember[] = [];
    await mapLimit(vms, deps.config.instanceConcurrency, async (vm) => {
      if (!isDeleting(vm.provisioningState)) members.push(await vmMember(vm, network, deps));
    });
    return members.sort((a, b) => a.member.localeCompare(b.member));
  }
  return (await network.listScaleSetNics(ref))
    .map((i) => ({ member: i.instanceId, nics: i.nics }))
    .sort((a, b) => Number(a.member) - Number(b.member));
}

/** The scale set's model (its orchestration mode and whether it is being deleted): the cache's row when fresh. */
async function scaleSetModel(ref: ScaleSetRef, compute: ComputePort, deps: IpPoolDeps) {
  const partition = await deps.cache.readPartition(ref);
  const entry: CachedEntry<ScaleSetModel> | undefined = partition.scaleSet;
  if (entry?.model && !entry.stale && deps.clock.now() - entry.readAt < deps.config.cacheTtlMs) return entry.model;
  const model = await compute.getScaleSet(ref);
  await deps.cache.storeScaleSet(ref, model, entry?.rowEtag);
  return model;
}

async function vmMember(vm: VmModel, network: NetworkPort, deps: IpPoolDeps): Promise<PoolMember> {
  const refs = checkedNicRefs(vm, deps.config.scopes);
  const nics = await Promise.all(refs.map((r) => network.getNic(r).then((n) => n.nic)));
  return { member: vm.id.split("/").pop() ?? vm.id, nics };
}
