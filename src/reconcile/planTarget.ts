import type { Config } from "../config";
import {
  ipSelectorText,
  selectorOf,
  toIntent,
  type Declaration,
  type Outcome,
  type StoredDeclaration,
} from "../core/declarations";
import {
  declarationAddressPrefix,
  fitToPool,
  planAddresses,
  wantedAddresses,
  type PoolMember,
} from "../core/ipPoolAddresses";
import { BeingDeletedError, NotFoundError, RefusedError } from "../core/errors";
import {
  isDeleting,
  type BackendPoolModel,
  type InstanceModel,
  type NicModel,
  type PoolAddress,
  type ScaleSetModel,
  type VmModel,
  type VmNicConfiguration,
} from "../core/models";
import { applyIntents, type PoolIntent } from "../core/networkProfile";
import { nameClaimed, recordClaims, type GatewayClaimStore } from "../core/gatewayPoolAddresses";
import { planResource, type BasedOn, type PlannedWrite } from "../core/plan";
import type { CachedEntry, Clock, ComputePort, DeclarationStore, ModelCache, NetworkPort } from "../core/ports";
import {
  parseBackendPoolId,
  parseNicId,
  parseVmId,
  type BackendPoolRef,
  sameResource,
  type NicRef,
  type ScaleSetRef,
  type TargetRef,
} from "../core/resourceIds";
import { inScopes, type Scope } from "../core/scopes";
import { crpRollsOutModel } from "../core/upgradePolicy";
import { modelNicConfigurations, uncertain, viewOf } from "../core/vmNicView";
import { activeDeclarations } from "./activeDeclarations";
import { OutcomeRecorder } from "./recordOutcomes";
import { orchestrationModeOf } from "./vmMembership";
import { usable } from "./vmNics";
import type { PoolKindsKnown } from "./poolKindsKnown";

/**
 * What a reconcile of a target would write now, without writing anything: ARM is only read, and only where the
 * reconcile would read it (a fresh cache row is used as the reconcile uses it); no cache row, outcome or message is
 * written. The edit is the reconcile's own (core/networkProfile's applyIntents, through core/plan). Two limits the
 * reconcile has too: nothing outside POOLSYNC_SCOPES is read (a VM's NIC elsewhere refuses the target, as the
 * reconcile fails it), and at most POOLSYNC_PLAN_MAX_READS ARM requests: anyone with poolsync.Read may ask for a
 * plan, and a Flexible scale set of a thousand VMs would otherwise cost a thousand NIC GETs per request.
 */

export interface TargetPlan {
  targetId: string;
  /** The declarations planned with (a dry run's adds the one it would store). */
  declarations: number;
  writes: PlannedWrite[];
  /** Declarations a reconcile would refuse or leave for their retry time, with why. */
  skipped: { backendPoolId: string; ipConfiguration: string; reason: string }[];
  /** Declarations that cannot be placed (no such ip configuration), with why: the reconcile would fail them. */
  unplaceable: { backendPoolId: string; ipConfiguration: string; reason: string }[];
  basedOn: { source: "cache" | "arm" | "mixed" | "none"; oldestAgeMs: number };
  reads: PlanReads;
}

/** The ARM requests a plan made (each GET and each LIST, however many pages, counts one) and what its bound left out. */
export interface PlanReads {
  made: number;
  limit: number;
  /** True when the bound stopped a read the plan needed: `writes` then lack what `notRead` names. */
  cutShort: boolean;
  /** What was not read (the first few), and how many in all. */
  notRead?: string[];
  notReadCount?: number;
}

export interface PlanDeps {
  compute: Pick<ComputePort, "getScaleSet" | "listInstances" | "getVm" | "listVms">;
  network: Pick<NetworkPort, "getNic" | "getBackendPool" | "listScaleSetNics">;
  declarations: Pick<DeclarationStore, "listForTarget">;
  cache: Pick<ModelCache, "enabled" | "readPartition" | "readEntry">;
  clock: Clock;
  config: Pick<Config, "scopes" | "bindings" | "cacheTtlMs" | "planMaxReads">;
  /** The process's knowledge of which pools are IP-based (shared with the reconcile): a known one costs no read. */
  poolKinds?: Pick<PoolKindsKnown, "cached" | "learn">;
  /** The targets' records of the addresses they added to Application Gateway pools (none: such pools not planned). */
  gatewayClaims?: Pick<GatewayClaimStore, "read">;
}

/** How many of the resources the bound left out are named in the answer. */
const NOT_READ_SHOWN = 20;

/** The read the bound refused, thrown to the resource that needed it: that resource is not planned. */
class ReadCut extends Error {}

/** Counts the plan's ARM requests against POOLSYNC_PLAN_MAX_READS. */
class ReadBound {
  private made = 0;
  private readonly notRead: string[] = [];
  constructor(private readonly limit: number) {}

  async read<T>(call: () => Promise<T>): Promise<T> {
    if (this.made >= this.limit) throw new ReadCut();
    this.made++;
    return call();
  }

  /** `id` was not planned because a read it needed was cut; true if the error was such a cut. */
  cut(err: unknown, id: string): boolean {
    if (!(err instanceof ReadCut)) return false;
    this.notRead.push(id);
    return true;
  }

  report(): PlanReads {
    const cutShort = this.notRead.length > 0;
    return {
      made: this.made,
      limit: this.limit,
      cutShort,
      ...(cutShort ? { notRead: this.notRead.slice(0, NOT_READ_SHOWN), notReadCount: this.notRead.length } : {}),
    };
  }
}

/** A recorder that keeps what the reconcile would record in memory: a plan writes no outcome. */
function dryRecorder(ref: TargetRef, clock: Clock, skipped: TargetPlan["skipped"]): OutcomeRecorder {
  const store = {
    recordOutcome: async (_: TargetRef, d: StoredDeclaration, o: Outcome) => {
      skipped.push({ backendPoolId: d.backendPoolId, ipConfiguration: d.ipConfiguration, reason: o.reason ?? o.kind });
      return true;
    },
  };
  return new OutcomeRecorder(ref, store as unknown as DeclarationStore, clock);
}

/** The stored declarations, with `extra` in place of the one of its key (a dry run's). */
function withExtra(stored: StoredDeclaration[], extra: Declaration | undefined, now: string): StoredDeclaration[] {
  if (!extra) return stored;
  const key = (d: Pick<Declaration, "backendPoolId" | "ipConfiguration">) =>
    `${d.backendPoolId.toLowerCase()}|${d.ipConfiguration.toLowerCase()}`;
  return [
    ...stored.filter((d) => key(d) !== key(extra)),
    { ...extra, outcome: { kind: "pending", at: now }, attempts: 0, rowEtag: "" },
  ];
}

/**
 * A VM's NIC IDs as the reconcile accepts them (src/reconcile/vmNics.ts): each parsed, inside POOLSYNC_SCOPES and in
 * the VM's own subscription, checked before any of them is read; else the target is refused with the reconcile's
 * reason.
 */
function nicRefsInScope(vm: VmModel, scopes: readonly Scope[]): NicRef[] {
  const vmSubscription = vm.id.split("/")[2]?.toLowerCase();
  return vm.nicIds.map((id) => {
    const r = parseNicId(id);
    if (!r.ok) throw new RefusedError(`NIC ${id} of ${vm.id}: ${r.reason}`);
    if (
      !inScopes(scopes, r.value.subscriptionId, r.value.resourceGroup) ||
      r.value.subscriptionId.toLowerCase() !== vmSubscription
    )
      throw new RefusedError(
        `NIC ${id} of ${vm.id} is outside POOLSYNC_SCOPES or the VM's subscription: poolsync reads and writes nothing there`,
      );
    return r.value;
  });
}

const isGone = (err: unknown) => err instanceof NotFoundError || err instanceof BeingDeletedError;

/**
 * Long: the plan mirrors the pass step by step (the read bound shared by nested planners for a scale set, its VMs and
 * its pools), so the nested planners close over one budget and one result.
 */
export async function planTarget(ref: TargetRef, deps: PlanDeps, extra?: Declaration): Promise<TargetPlan> {
  const now = deps.clock.now();
  const declarations = withExtra(await deps.declarations.listForTarget(ref), extra, new Date(now).toISOString());
  const skipped: TargetPlan["skipped"] = [];
  const { active } = await activeDeclarations(
    ref,
    declarations,
    dryRecorder(ref, deps.clock, skipped),
    deps.config,
    now,
  );
  const bound = new ReadBound(deps.config.planMaxReads);
  // IP-based pools (issue 43): planned on the pool's own address list, as the reconcile writes them.
  const ipPlan = await planIpPools(ref, active, bound, deps, now);
  const onRefs = active.filter((d) => !ipPlan.declarations.has(d));
  active.splice(0, active.length, ...onRefs);
  const intents = active.map(toIntent);
  const bases: BasedOn[] = [];
  const based = (b: BasedOn) => (bases.push(b), b);
  const fromArm = () => based({ source: "arm", ageMs: 0 });
  const fromCache = <M>(e: CachedEntry<M> | undefined): e is CachedEntry<M> & { model: M } =>
    usable(e, now, deps.config.cacheTtlMs);
  const writes: PlannedWrite[] = [...ipPlan.writes];
  if (ipPlan.writes.length > 0) fromArm();
  const unplaceable: TargetPlan["unplaceable"] = [...ipPlan.unplaceable];
  const unplace = (i: number, reason: string) => {
    const d = active[i] as StoredDeclaration;
    unplaceable.push({ backendPoolId: d.backendPoolId, ipConfiguration: d.ipConfiguration, reason });
  };
  /** `only`: the indices of the intents placed here (default all). */
  const placed = (nics: Parameters<typeof applyIntents>[0], where: string, only = intents.map((_, i) => i)) =>
    applyIntents(
      nics,
      only.map((i) => intents[i] as PoolIntent),
    ).outcomes.forEach((o, k) => {
      if (!o.ok) unplace(only[k] as number, `${where}: ${o.reason}`);
    });

  const nicOf = async (r: NicRef): Promise<[NicModel, BasedOn]> => {
    const e = await deps.cache.readEntry(r);
    if (fromCache(e)) return [e.model as NicModel, { source: "cache", ageMs: now - e.readAt }];
    return [await bound.read(() => deps.network.getNic(r)), { source: "arm", ageMs: 0 }];
  };
  /** A VM's NICs planned together: the oldest of what they were read from. */
  const nicBase = (bs: BasedOn[]): BasedOn =>
    bs.reduce<BasedOn>((a, b) => (b.ageMs > a.ageMs || b.source === "cache" ? b : a), { source: "arm", ageMs: 0 });

  /** The writes on one VM's NICs: nothing read outside the scopes, nothing planned unless every NIC was read. */
  const planVm = async (vm: VmModel, modelConfigs?: readonly VmNicConfiguration[]) => {
    if (isDeleting(vm.provisioningState)) return;
    const nicRefs = nicRefsInScope(vm, deps.config.scopes);
    const nics: NicModel[] = [];
    const nicBases: BasedOn[] = [];
    try {
      for (const r of nicRefs) {
        const [nic, b] = await nicOf(r);
        nics.push(nic);
        nicBases.push(b);
      }
    } catch (err) {
      // As the reconcile: a VM (or its NIC) gone meanwhile is skipped, not a failure.
      if (isGone(err) || bound.cut(err, vm.id)) return;
      throw err;
    }
    nicBases.forEach(based);
    const mapped = viewOf(vm, nics, modelConfigs);
    const where = `VM ${vm.id.split("/").pop() ?? vm.id}`;
    // As the reconcile: what cannot be placed on this VM's NICs with certainty is not written but failed, with why.
    const certain = intents.flatMap((intent, i) => {
      const why = uncertain(mapped, intent);
      if (why) unplace(i, `${where}: ${why}`);
      return why ? [] : [i];
    });
    placed(mapped.nics, where, certain);
    writes.push(
      ...planResource(
        "nic",
        nicRefs.map((r) => r.id),
        nics.map((n) => n.etag),
        mapped.nics,
        certain.map((i) => intents[i] as PoolIntent),
        nicBase(nicBases),
      ),
    );
  };

  const planVmTarget = async (vmId: string) => {
    const vmRef = parseVmId(vmId);
    if (!vmRef.ok) return;
    let vm: VmModel;
    try {
      // As the reconcile: one GET of the VM (its NIC list), never from the cache.
      vm = await bound.read(() => deps.compute.getVm(vmRef.value));
    } catch (err) {
      if (bound.cut(err, vmId)) return;
      throw err;
    }
    fromArm();
    await planVm(vm);
  };

  /** Long: mirrors reconcileScaleSet's steps on the plan's read bound. */
  async function planScaleSet(ss: ScaleSetRef): Promise<void> {
    const partition = await deps.cache.readPartition(ss);
    let model: ScaleSetModel;
    let modelBase: BasedOn;
    if (fromCache(partition.scaleSet)) {
      model = partition.scaleSet.model;
      modelBase = based({ source: "cache", ageMs: now - partition.scaleSet.readAt });
    } else {
      try {
        model = await bound.read(() => deps.compute.getScaleSet(ss));
      } catch (err) {
        if (bound.cut(err, ss.id)) return;
        throw err;
      }
      modelBase = fromArm();
    }
    placed(model.nics, "model");
    writes.push(...planResource("model", [model.id], [model.etag], model.nics, intents, modelBase));
    const mode = orchestrationModeOf(model);
    if (mode === "Flexible") {
      let listed: VmModel[];
      try {
        listed = await bound.read(() => deps.compute.listVms(ss));
      } catch (err) {
        if (bound.cut(err, `${ss.id.replace(/\/providers\/.*$/i, "")}/providers/Microsoft.Compute/virtualMachines`))
          return;
        throw err;
      }
      fromArm();
      // As the reconcile: each VM as listed (no GET of its own), its NICs from the cache or ARM.
      const configs = modelNicConfigurations(model.nics);
      for (const vm of listed)
        if (vm.scaleSetId !== undefined && sameResource(vm.scaleSetId, ss.id)) await planVm(vm, configs);
      return;
    }
    // Automatic/Rolling: CRP rolls the model out; the reconcile writes no instance.
    if (crpRollsOutModel(model.upgradeMode)) return;
    const entries = [...partition.instances.values()];
    const needsWrite = (i: InstanceModel) =>
      !isDeleting(i.provisioningState) && applyIntents(i.nics, intents).nics !== undefined;
    let instances: InstanceModel[];
    let base: BasedOn;
    const cached =
      entries.length > 0 &&
      entries.every((e) => fromCache(e)) &&
      (model.capacity === undefined || entries.length === model.capacity);
    if (deps.cache.enabled && cached && !entries.some((e) => needsWrite(e.model as InstanceModel))) {
      instances = entries.map((e) => e.model as InstanceModel);
      base = based({ source: "cache", ageMs: Math.max(...entries.map((e) => now - e.readAt)) });
    } else {
      // As the reconcile: a write is never planned from a cached instance body (its ID may have been reused).
      try {
        instances = await bound.read(() => deps.compute.listInstances(ss));
      } catch (err) {
        if (bound.cut(err, `${ss.id}/virtualMachines`)) return;
        throw err;
      }
      base = fromArm();
    }
    for (const i of instances)
      if (!isDeleting(i.provisioningState))
        writes.push(...planResource("instance", [i.id], [i.etag], i.nics, intents, base));
  }

  if (intents.length > 0) {
    try {
      if (ref.kind === "vm") await planVmTarget(ref.id);
      else await planScaleSet(ref);
    } catch (err) {
      // A NIC the reconcile may not touch: it fails every declaration it is writing with this reason, and so the
      // plan names them; what it planned before (a Flexible model, earlier VMs) is what the reconcile writes first.
      if (!(err instanceof RefusedError)) throw err;
      active.forEach((_, i) => unplace(i, err.message));
    }
  }

  const sources = new Set(bases.map((b) => b.source));
  return {
    targetId: ref.id,
    declarations: declarations.length,
    writes,
    skipped,
    unplaceable,
    basedOn: {
      source: sources.size === 0 ? "none" : sources.size > 1 ? "mixed" : ([...sources][0] as "cache" | "arm"),
      oldestAgeMs: Math.max(0, ...bases.map((b) => b.ageMs)),
    },
    reads: bound.report(),
  };
}

/**
 * The pool writes a reconcile would make for the target's declarations into IP-based pools: each pool read (its kind
 * and ETag), the target's members read as the reconcile reads them, and the address list it would write. Only this
 * target's share: other targets' passes may join the same pool write.
 * Long: mirrors reconcileIpPools step by step on the same read bound.
 */
async function planIpPools(
  ref: TargetRef,
  active: readonly StoredDeclaration[],
  bound: ReadBound,
  deps: PlanDeps,
  now: number,
): Promise<{ declarations: Set<StoredDeclaration>; writes: PlannedWrite[]; unplaceable: TargetPlan["unplaceable"] }> {
  const pools = new Map<string, { pool: BackendPoolModel; ref: BackendPoolRef; ds: StoredDeclaration[] }>();
  const declarations = new Set<StoredDeclaration>();
  const unplaceable: TargetPlan["unplaceable"] = [];
  for (const d of active) {
    const p = parseBackendPoolId(d.backendPoolId);
    if (!p.ok || p.value.poolKind === "inboundNatPool") continue;
    const gateway = p.value.poolKind === "applicationGatewayBackendPool";
    if (gateway && !deps.gatewayClaims) continue;
    if (deps.poolKinds?.cached(p.value).hit && deps.poolKinds.cached(p.value).ipBased !== true) continue;
    let entry = pools.get(p.value.key);
    if (!entry) {
      try {
        const read = await bound.read(() => deps.network.getBackendPool(p.value));
        deps.poolKinds?.learn(p.value, read.ipBased);
        // A gateway's addresses have no names: the target's record names the ones it added, as the reconcile does.
        const pool =
          gateway && read.ipBased === true
            ? {
                ...read,
                addresses: nameClaimed(
                  read.addresses,
                  recordClaims(await deps.gatewayClaims!.read(ref, p.value.key), read),
                ),
              }
            : read;
        entry = { pool, ref: p.value, ds: [] };
        pools.set(p.value.key, entry);
      } catch (err) {
        if (bound.cut(err, p.value.id) || isGone(err)) continue;
        throw err;
      }
    }
    if (entry.pool.ipBased !== true) continue;
    entry.ds.push(d);
    declarations.add(d);
  }
  const ip = [...pools.values()].filter((e) => e.ds.length > 0);
  if (ip.length === 0) return { declarations, writes: [], unplaceable };
  let members: PoolMember[];
  try {
    members = await planMembers(ref, bound, deps, now);
  } catch (err) {
    if (bound.cut(err, ref.id)) return { declarations, writes: [], unplaceable };
    throw err;
  }
  const writes: PlannedWrite[] = [];
  for (const { pool, ref: poolRef, ds } of ip) {
    const contributions = ds.flatMap((d) => {
      const selectorText = ipSelectorText(d);
      const prefix = declarationAddressPrefix(ref.key, selectorText);
      const want = wantedAddresses(
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
      for (const u of want.unplaced.filter((x) => !/no private IP address yet/.test(x.reason)))
        unplaceable.push({
          backendPoolId: d.backendPoolId,
          ipConfiguration: d.ipConfiguration,
          reason: `${u.member}: ${u.reason}`,
        });
      // A move's removal is planned as the reconcile makes it: after the pool it moves to holds the members.
      return d.movedTo !== undefined ? [] : [{ prefix, wanted: want.wanted }];
    });
    const edit = planAddresses(
      pool.addresses,
      contributions.map((c) => fitToPool(c, pool)),
    );
    if (!edit) continue;
    const text = (a: PoolAddress) => `${a.ipAddress ?? "?"} (${a.name})`;
    const had = new Set(pool.addresses.map((a) => a.name.toLowerCase()));
    const has = new Set(edit.map((a) => a.name.toLowerCase()));
    writes.push({
      kind: "pool",
      id: poolRef.id,
      ifMatch: pool.etag,
      ipConfigurations: [],
      addresses: {
        gain: edit.filter((a) => !had.has(a.name.toLowerCase())).map(text),
        lose: pool.addresses.filter((a) => !has.has(a.name.toLowerCase())).map(text),
      },
      basedOn: { source: "arm", ageMs: 0 },
    });
  }
  return { declarations, writes, unplaceable };
}

/** The target's members with their NICs, as the reconcile reads them (reconcile/ipPools.ts), within the read bound. */
async function planMembers(ref: TargetRef, bound: ReadBound, deps: PlanDeps, now: number): Promise<PoolMember[]> {
  const vmMember = async (vm: VmModel): Promise<PoolMember> => {
    const nics: NicModel["nic"][] = [];
    for (const r of nicRefsInScope(vm, deps.config.scopes))
      nics.push((await bound.read(() => deps.network.getNic(r))).nic);
    return { member: vm.id.split("/").pop() ?? vm.id, nics };
  };
  if (ref.kind === "vm") return [await vmMember(await bound.read(() => deps.compute.getVm(ref)))];
  const partition = await deps.cache.readPartition(ref);
  const model = usable(partition.scaleSet, now, deps.config.cacheTtlMs)
    ? (partition.scaleSet!.model as ScaleSetModel)
    : await bound.read(() => deps.compute.getScaleSet(ref));
  if (orchestrationModeOf(model) === "Flexible") {
    const vms = (await bound.read(() => deps.compute.listVms(ref))).filter(
      (v) => v.scaleSetId !== undefined && sameResource(v.scaleSetId, ref.id) && !isDeleting(v.provisioningState),
    );
    const out: PoolMember[] = [];
    for (const vm of vms) out.push(await vmMember(vm));
    return out;
  }
  return (await bound.read(() => deps.network.listScaleSetNics(ref))).map((i) => ({
    member: i.instanceId,
    nics: i.nics,
  }));
}
