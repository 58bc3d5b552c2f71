import { ipSelectorText, toIntent, type StoredDeclaration } from "../core/declarations";
import { isDeleting, type InstanceModel, type ScaleSetModel } from "../core/models";
import { allPoolReferences, intentSatisfied, type NicConfiguration } from "../core/networkProfile";
import type { CachedEntry, CachedPartition, CachedVmNics } from "../core/ports";
import { parseTargetId, type PoolKind } from "../core/resourceIds";
import { poolKindOfId } from "../core/poolKinds";
import type { Observation, SyncState } from "./observation";
import { observeOnVm, vmNicsViews, type VmNicsView, type VmObservation } from "./vmNicState";
import { modelNicConfigurations } from "../core/vmNicView";

/**
 * Declared vs observed for one scale set, from the memberships rows and the ETag cache only: the status views never
 * call ARM (reads are scarce and belong to the reconcile). So "observed" means "as poolsync last saw it", and each
 * observation says how old it is and whether it is known to be stale.
 */

export type { ObservedState, Observation, SyncState } from "./observation";

export interface InstanceObservation extends Observation {
  instanceId: string;
}

export interface MembershipView {
  backendPoolId: string;
  /** null = the primary ip configuration. */
  ipConfiguration: string | null;
  /** Which kind of pool (issue 43): a load balancer's backend pool, an inbound NAT pool, a gateway's pool. */
  poolKind: PoolKind;
  declared: "present" | "absent";
  declaredAt: string;
  requestId: string;
  /** Who declared it (Entra principal id and name, "function-key", or "queue"). */
  declaredBy: { id: string; name: string; via: string };
  /** The members' declared admin state in an IP-based pool, and which members it applies to (absent: all). */
  adminState?: string;
  adminInstances?: string[];
  /** Half of a move: this absent goes where that pool came. */
  movedTo?: string;
  outcome: { kind: string; reason?: string; at: string; appliedEtag?: string; retryAt?: string; via?: string };
  attempts: number;
  /** drift: something known differs from the declaration; unknown: nothing differs but something is not known. */
  sync: SyncState;
  model: Observation;
  instances: InstanceObservation[];
  /** A VM target's VM, or a Flexible scale set's VMs: whether each holds it on its NICs (absent for Uniform). */
  vms?: VmObservation[];
}

/**
 * A membership an IP-based pool holds (issue 43): the pool lists the target's addresses itself, so the model, the
 * instances and the NICs the cache holds say nothing of it; what is known is what ARM answered the pass's pool write.
 */
const BY_THE_POOL: Observation = {
  state: "unknown",
  note: "an IP-based pool lists the addresses itself: the outcome is what ARM answered the pool write",
  stale: false,
};

function poolMembership(d: StoredDeclaration): MembershipView {
  return {
    ...commonOf(d),
    sync: d.outcome.kind === "applied" ? "in-sync" : "unknown",
    model: BY_THE_POOL,
    instances: [],
  };
}

/** What every membership view says of its declaration, whatever holds it. */
function commonOf(d: StoredDeclaration) {
  return {
    backendPoolId: d.backendPoolId,
    poolKind: poolKindOfId(d.backendPoolId),
    ipConfiguration: ipSelectorText(d) || null,
    declared: d.state,
    declaredAt: d.declaredAt,
    requestId: d.requestId,
    declaredBy: d.declaredBy,
    ...(d.adminState !== undefined ? { adminState: d.adminState } : {}),
    ...(d.adminInstances !== undefined ? { adminInstances: d.adminInstances } : {}),
    ...(d.movedTo !== undefined ? { movedTo: d.movedTo } : {}),
    outcome: {
      kind: d.outcome.kind,
      at: d.outcome.at,
      ...(d.outcome.reason ? { reason: d.outcome.reason } : {}),
      ...(d.outcome.appliedEtag ? { appliedEtag: d.outcome.appliedEtag } : {}),
      ...(d.outcome.retryAt ? { retryAt: d.outcome.retryAt } : {}),
      ...(d.outcome.via ? { via: d.outcome.via } : {}),
    },
    attempts: d.attempts,
  };
}

export interface ObservedPool {
  nicConfiguration: string;
  ipConfiguration: string;
  backendPoolId: string;
  declared: boolean;
}

export interface ScaleSetView {
  scaleSetId: string;
  cacheEnabled: boolean;
  model: {
    etag?: string;
    readAt?: string;
    stale: boolean;
    staleReason?: string;
    cached: boolean;
    capacity?: number;
    provisioningState?: string;
  };
  memberships: MembershipView[];
  /** Every pool reference in the cached model, ours or anyone else's, so other writers' pools are visible too. */
  observedPools: ObservedPool[];
  /** A VM target's VM, or a Flexible scale set's VMs, with their NICs' pools (absent for a Uniform scale set). */
  vms?: VmNicsView[];
  /** More VMs are cached for this scale set than `vms` shows. */
  vmsTruncated?: boolean;
}

export interface ObserveOptions {
  now: number;
  ttlMs: number;
  cacheEnabled: boolean;
}

function isStale(entry: CachedEntry<unknown>, o: ObserveOptions): boolean {
  return entry.stale || o.now - entry.readAt >= o.ttlMs;
}

function staleReasonOf(entry: CachedEntry<unknown>, o: ObserveOptions): string | undefined {
  if (entry.stale) return entry.staleReason ?? "marked stale";
  if (o.now - entry.readAt >= o.ttlMs)
    return `read ${Math.round((o.now - entry.readAt) / 1000)} s ago, past the ${Math.round(o.ttlMs / 1000)} s TTL`;
  return undefined;
}

function observe(
  entry: CachedEntry<{ nics: NicConfiguration[]; etag: string; provisioningState: string | undefined }> | undefined,
  d: StoredDeclaration,
  o: ObserveOptions,
): Observation {
  if (!o.cacheEnabled)
    return { state: "unknown", note: "the cache is disabled (POOLSYNC_CACHE_ENABLED=false)", stale: false };
  if (!entry || !entry.model)
    return {
      state: "unknown",
      note: entry ? "not read since it was invalidated" : "not read yet",
      stale: entry?.stale ?? false,
      ...(entry?.staleReason ? { staleReason: entry.staleReason } : {}),
    };
  const base = {
    etag: entry.model.etag,
    readAt: new Date(entry.readAt).toISOString(),
    stale: isStale(entry, o),
    ...(staleReasonOf(entry, o) ? { staleReason: staleReasonOf(entry, o) } : {}),
  };
  const satisfied = intentSatisfied(entry.model.nics, toIntent(d));
  const deleting = isDeleting(entry.model.provisioningState) ? { note: "being deleted" } : {};
  if (typeof satisfied === "string") return { state: "absent", note: satisfied, ...base };
  const present = satisfied === (d.state === "present");
  return { state: present ? "present" : "absent", ...deleting, ...base };
}

function syncOf(declared: "present" | "absent", observations: Observation[]): SyncState {
  const known = observations.filter((o) => o.state !== "unknown" && o.note !== "being deleted");
  if (known.some((o) => o.state !== declared)) return "drift";
  if (observations.some((o) => o.state === "unknown")) return "unknown";
  return "in-sync";
}

export function poolsOf(nics: readonly NicConfiguration[]): Omit<ObservedPool, "declared">[] {
  const out: Omit<ObservedPool, "declared">[] = [];
  for (const nic of nics) {
    for (const ip of nic.ipConfigurations ?? []) {
      for (const p of allPoolReferences(ip)) {
        if (typeof p.id === "string")
          out.push({ nicConfiguration: nic.name, ipConfiguration: ip.name, backendPoolId: p.id });
      }
    }
  }
  return out;
}

/** A VM has no model: its membership is on its NICs alone. */
const NO_MODEL: Observation = {
  state: "unknown",
  note: "a VM has no model: its membership is on its NICs",
  stale: false,
};

/** Long: the observed state of a scale set from its cached rows, field by field. */
export function observeScaleSet(
  scaleSetId: string,
  declarations: readonly StoredDeclaration[],
  partition: CachedPartition,
  o: ObserveOptions,
  /** The cached VMs whose NICs hold the target's memberships (a VM target, a Flexible scale set). */
  vmNics?: { vms: CachedVmNics[]; truncated: boolean },
): ScaleSetView {
  const target = parseTargetId(scaleSetId);
  const isVm = target.ok && target.value.kind === "vm";
  const modelEntry = partition.scaleSet as CachedEntry<ScaleSetModel> | undefined;
  const instances = [...partition.instances.entries()].sort(([a], [b]) => Number(a) - Number(b)) as [
    string,
    CachedEntry<InstanceModel>,
  ][];
  const declaredPools = new Set(
    declarations.filter((d) => d.state === "present").map((d) => d.backendPoolId.toLowerCase()),
  );
  // A Flexible VM that answers only its NIC references is mapped on the model's NIC configurations, as the reconcile
  // maps it.
  const modelConfigs = modelEntry?.model ? modelNicConfigurations(modelEntry.model.nics) : undefined;
  const memberships = [...declarations]
    .sort(
      (a, b) => a.backendPoolId.localeCompare(b.backendPoolId) || a.ipConfiguration.localeCompare(b.ipConfiguration),
    )
    .map((d): MembershipView => {
      if (d.outcome.via === "pool") return poolMembership(d);
      const model = isVm ? NO_MODEL : observe(modelEntry, d, o);
      const perInstance = instances.map(([instanceId, entry]) => ({ instanceId, ...observe(entry, d, o) }));
      const perVm = vmNics?.vms.flatMap((vm) => observeOnVm(vm, d, o, modelConfigs) ?? []);
      // A VM not cached yet is not "in sync": nothing at all is known of it.
      const vmUnknown: Observation[] =
        isVm && (perVm ?? []).length === 0
          ? [{ state: "unknown", note: "the VM is not cached yet", stale: false }]
          : [];
      return {
        ...commonOf(d),
        sync: syncOf(d.state, [...(isVm ? [] : [model]), ...perInstance, ...(perVm ?? []), ...vmUnknown]),
        model,
        instances: perInstance,
        ...(perVm ? { vms: perVm } : {}),
      };
    });
  const m = modelEntry?.model;
  return {
    scaleSetId: m?.id ?? scaleSetId,
    cacheEnabled: o.cacheEnabled,
    model: {
      cached: m !== undefined,
      stale: modelEntry ? isStale(modelEntry, o) : false,
      ...(m ? { etag: m.etag, readAt: new Date(modelEntry!.readAt).toISOString() } : {}),
      ...(modelEntry && staleReasonOf(modelEntry, o) ? { staleReason: staleReasonOf(modelEntry, o) } : {}),
      ...(m?.capacity !== undefined ? { capacity: m.capacity } : {}),
      ...(m?.provisioningState ? { provisioningState: m.provisioningState } : {}),
    },
    memberships,
    observedPools: m
      ? poolsOf(m.nics).map((p) => ({ ...p, declared: declaredPools.has(p.backendPoolId.toLowerCase()) }))
      : [],
    ...(vmNics ? { vms: vmNicsViews(vmNics.vms, declarations, o, modelConfigs) } : {}),
    ...(vmNics?.truncated ? { vmsTruncated: true } : {}),
  };
}
