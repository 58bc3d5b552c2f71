import { toIntent, type StoredDeclaration } from "../core/declarations";
import type { NicModel } from "../core/models";
import { allPoolReferences, intentSatisfied } from "../core/networkProfile";
import type { CachedEntry, CachedVmNics } from "../core/ports";
import { uncertain, viewOf } from "../core/vmNicView";
import type { Observation } from "./observation";

/**
 * Declared vs observed on the NICs of VMs (a standalone VM's, a Flexible scale set's), from the cache rows the
 * reconcile keeps, never ARM: each VM's NICs with the pools on each ip configuration, and per declaration whether each
 * VM holds it. The NICs are mapped as the reconcile maps them (core/vmNicView), so a declaration is judged on the NIC
 * it lands on.
 */

export interface Freshness {
  etag?: string;
  readAt?: string;
  stale: boolean;
  staleReason?: string;
}

export interface NicIpConfigurationView {
  name: string;
  /** Every pool on it, ours (`declared`: a declaration names it present) or anyone else's. */
  backendPools: { id: string; declared: boolean }[];
}

export interface NicView extends Freshness {
  nicId: string;
  /** The NIC configuration it was built from (a Flexible VM's), else its resource name. */
  name: string;
  primary: boolean;
  /** Not cached yet, or cached without a body (invalidated): nothing known of its pools. */
  note?: string;
  ipConfigurations: NicIpConfigurationView[];
}

export interface VmNicsView extends Freshness {
  vmId: string;
  nics: NicView[];
}

/** One declaration on one VM, as an instance's is shown. */
export interface VmObservation extends Observation {
  vmId: string;
}

export interface FreshnessOptions {
  now: number;
  ttlMs: number;
}

export function freshnessOf(entry: CachedEntry<unknown>, o: FreshnessOptions): Freshness {
  const expired = o.now - entry.readAt >= o.ttlMs;
  const etag = (entry.model as { etag?: string } | undefined)?.etag;
  const reason = entry.stale
    ? (entry.staleReason ?? "marked stale")
    : expired
      ? `read ${Math.round((o.now - entry.readAt) / 1000)} s ago, past the ${Math.round(o.ttlMs / 1000)} s TTL`
      : undefined;
  return {
    ...(etag ? { etag } : {}),
    ...(entry.readAt > 0 ? { readAt: new Date(entry.readAt).toISOString() } : {}),
    stale: entry.stale || expired,
    ...(reason ? { staleReason: reason } : {}),
  };
}

const readable = (
  n: CachedVmNics["nics"][number],
): n is { id: string; entry: CachedEntry<NicModel> & { model: NicModel } } => n.entry?.model !== undefined;

/** Each VM's NICs and the pools on each of their ip configurations. */
export function vmNicsViews(
  vms: readonly CachedVmNics[],
  declarations: readonly StoredDeclaration[],
  o: FreshnessOptions,
): VmNicsView[] {
  const declared = new Set(declarations.filter((d) => d.state === "present").map((d) => d.backendPoolId.toLowerCase()));
  return vms.flatMap(({ vm, nics }) => {
    if (!vm.model) return [];
    const model = vm.model;
    const known = nics.filter(readable);
    const mapped = viewOf(
      model,
      known.map((n) => n.entry.model),
    ).nics;
    return [
      {
        vmId: model.id,
        ...freshnessOf(vm, o),
        nics: nics.map((n): NicView => {
          const resourceName = n.id.split("/").pop() ?? n.id;
          if (!readable(n))
            return {
              nicId: n.id,
              name: resourceName,
              primary: n.id.toLowerCase() === (model.primaryNicId ?? "").toLowerCase(),
              stale: n.entry?.stale ?? false,
              ...(n.entry?.staleReason ? { staleReason: n.entry.staleReason } : {}),
              note: n.entry ? "not read since it was invalidated" : "not read yet",
              ipConfigurations: [],
            };
          const seen = mapped[known.indexOf(n)];
          return {
            nicId: n.entry.model.id,
            name: seen?.name || resourceName,
            primary: seen?.primary === true,
            ...freshnessOf(n.entry, o),
            ipConfigurations: (n.entry.model.nic.ipConfigurations ?? []).map((c) => ({
              name: c.name,
              backendPools: allPoolReferences(c).flatMap((p) =>
                typeof p.id === "string" ? [{ id: p.id, declared: declared.has(p.id.toLowerCase()) }] : [],
              ),
            })),
          };
        }),
      },
    ];
  });
}

/** Whether one VM holds one declaration: unknown while a NIC is not cached or the NIC it lands on is uncertain. */
export function observeOnVm(vm: CachedVmNics, d: StoredDeclaration, o: FreshnessOptions): VmObservation | undefined {
  if (!vm.vm.model) return undefined;
  const vmId = vm.vm.model.id;
  const entries = [vm.vm, ...vm.nics.flatMap((n) => (n.entry ? [n.entry] : []))].map((e) => freshnessOf(e, o));
  const stale = entries.find((f) => f.stale);
  const staleness = { stale: stale !== undefined, ...(stale?.staleReason ? { staleReason: stale.staleReason } : {}) };
  const missing = vm.nics.find((n) => !readable(n));
  if (missing)
    return {
      vmId,
      state: "unknown",
      note: `NIC ${missing.id.split("/").pop() ?? missing.id} ${missing.entry ? "not read since it was invalidated" : "not read yet"}`,
      ...staleness,
    };
  const view = viewOf(
    vm.vm.model,
    vm.nics.filter(readable).map((n) => n.entry.model),
  );
  const intent = toIntent(d);
  const doubt = uncertain(view, intent);
  if (doubt) return { vmId, state: "unknown", note: doubt, ...staleness };
  const satisfied = intentSatisfied(view.nics, intent);
  if (typeof satisfied === "string") return { vmId, state: "absent", note: satisfied, ...staleness };
  return { vmId, state: satisfied === (d.state === "present") ? "present" : "absent", ...staleness };
}
