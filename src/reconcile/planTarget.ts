import type { Config } from "../config";
import { toIntent, type Declaration, type Outcome, type StoredDeclaration } from "../core/declarations";
import { isDeleting, type InstanceModel, type NicModel, type ScaleSetModel } from "../core/models";
import { applyIntents, type PoolIntent } from "../core/networkProfile";
import { planResource, type BasedOn, type PlannedWrite } from "../core/plan";
import type { CachedEntry, Clock, ComputePort, DeclarationStore, ModelCache, NetworkPort } from "../core/ports";
import {
  parseNicId,
  sameResource,
  type NicRef,
  type ScaleSetRef,
  type TargetRef,
  parseVmId,
} from "../core/resourceIds";
import { crpRollsOutModel } from "../core/upgradePolicy";
import { activeDeclarations } from "./activeDeclarations";
import { OutcomeRecorder } from "./recordOutcomes";
import { orchestrationModeOf } from "./vmMembership";
import { usable } from "./vmNics";
import { uncertain, viewOf } from "../core/vmNicView";

/**
 * What a reconcile of a target would write now, without writing anything: ARM is only read, and only where the
 * reconcile would read it (a fresh cache row is used as the reconcile uses it); no cache row, outcome or message is
 * written. The edit is the reconcile's own (core/networkProfile's applyIntents, through core/plan).
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
}

export interface PlanDeps {
  compute: Pick<ComputePort, "getScaleSet" | "listInstances" | "getVm" | "listVms">;
  network: Pick<NetworkPort, "getNic">;
  declarations: Pick<DeclarationStore, "listForTarget">;
  cache: Pick<ModelCache, "enabled" | "readPartition" | "readEntry">;
  clock: Clock;
  config: Pick<Config, "scopes" | "bindings" | "cacheTtlMs">;
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
  const intents = active.map(toIntent);
  const bases: BasedOn[] = [];
  const based = (b: BasedOn) => (bases.push(b), b);
  const fromCache = <M>(e: CachedEntry<M> | undefined): e is CachedEntry<M> & { model: M } =>
    usable(e, now, deps.config.cacheTtlMs);
  const writes: PlannedWrite[] = [];
  const unplaceable: TargetPlan["unplaceable"] = [];
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

  const planVm = async (vmId: string) => {
    const vmRef = parseVmId(vmId);
    if (!vmRef.ok) return;
    // As the reconcile: one GET of the VM (its NIC list), never from the cache.
    const vm = await deps.compute.getVm(vmRef.value);
    based({ source: "arm", ageMs: 0 });
    if (isDeleting(vm.provisioningState)) return;
    const nicRefs = vm.nicIds.flatMap((id) => {
      const r = parseNicId(id);
      return r.ok ? [r.value] : [];
    });
    const nics: NicModel[] = [];
    const nicBases: BasedOn[] = [];
    for (const r of nicRefs) {
      const [nic, b] = await nicOf(r);
      nics.push(nic);
      nicBases.push(b);
    }
    const mapped = viewOf(vm, nics);
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
  const nicOf = async (r: NicRef): Promise<[NicModel, BasedOn]> => {
    const e = await deps.cache.readEntry(r);
    if (fromCache(e)) return [e.model as NicModel, based({ source: "cache", ageMs: now - e.readAt })];
    return [await deps.network.getNic(r), based({ source: "arm", ageMs: 0 })];
  };
  /** A VM's NICs planned together: the oldest of what they were read from. */
  const nicBase = (bs: BasedOn[]): BasedOn =>
    bs.reduce<BasedOn>((a, b) => (b.ageMs > a.ageMs || b.source === "cache" ? b : a), { source: "arm", ageMs: 0 });

  if (intents.length > 0) {
    if (ref.kind === "vm") await planVm(ref.id);
    else await planScaleSet(ref);
  }

  async function planScaleSet(ss: ScaleSetRef): Promise<void> {
    const partition = await deps.cache.readPartition(ss);
    let model: ScaleSetModel;
    let modelBase: BasedOn;
    if (fromCache(partition.scaleSet)) {
      model = partition.scaleSet.model;
      modelBase = based({ source: "cache", ageMs: now - partition.scaleSet.readAt });
    } else {
      model = await deps.compute.getScaleSet(ss);
      modelBase = based({ source: "arm", ageMs: 0 });
    }
    placed(model.nics, "model");
    writes.push(...planResource("model", [model.id], [model.etag], model.nics, intents, modelBase));
    const mode = orchestrationModeOf(model);
    if (mode === "Flexible") {
      const vms = (await deps.compute.listVms(ss)).filter(
        (vm) => vm.scaleSetId !== undefined && sameResource(vm.scaleSetId, ss.id),
      );
      for (const vm of vms) await planVm(vm.id);
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
      instances = await deps.compute.listInstances(ss);
      base = based({ source: "arm", ageMs: 0 });
    }
    for (const i of instances)
      if (!isDeleting(i.provisioningState))
        writes.push(...planResource("instance", [i.id], [i.etag], i.nics, intents, base));
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
  };
}
