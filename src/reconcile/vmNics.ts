import { BeingDeletedError, NotFoundError } from "../core/errors";
import { isDeleting, type NicModel, type VmModel } from "../core/models";
import { applyIntents, intentSatisfied, type IntentOutcome, type NicConfiguration, type PoolIntent } from "../core/networkProfile";
import type { CachedEntry, ModelCache, NetworkPort } from "../core/ports";
import { parseNicId, type NicRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";
import { ifMatchWrite, type IfMatchDeps } from "./ifMatchWrite";

/**
 * The membership of a VM that exists outside a Uniform scale set lives on its NIC resources. The VM's NICs are
 * seen as the NIC configurations of a scale set (same ip configuration shape), so the one pure edit and the one
 * If-Match loop serve them: per NIC that differs, GET it, change only the selected ip configuration's pools,
 * PUT it whole with If-Match on its weak ETag; a 412 re-reads that NIC and recomputes.
 */

export interface VmNicDeps extends IfMatchDeps {
  network: NetworkPort;
  cache: ModelCache;
  config: IfMatchDeps["config"] & { cacheTtlMs: number; instanceConcurrency: number };
}

export interface VmNicResult {
  vmId: string;
  /** NIC writes that succeeded. */
  written: number;
  /** The VM (or its NIC) went away under us: nothing more to do for it. */
  gone: boolean;
  /** What the VM's NICs hold now, seen as NIC configurations. */
  view: NicConfiguration[];
  /** One per intent: whether it could be placed on this VM at all. */
  outcomes: IntentOutcome[];
  /** What the NICs held before this pass wrote them (drift is judged on it), with each NIC's ID. */
  before?: { nicIds: string[]; view: NicConfiguration[] };
}

const lower = (s: string | undefined) => (s ?? "").toLowerCase();

/**
 * The name a NIC answers to in a declaration's "nic/ipconfig": its resource name, or the scale set model's NIC
 * configuration it was built from (Flexible VMs' NICs are named "<vm>-<configuration>").
 */
function viewName(nicName: string, modelNicNames: readonly string[]): string {
  const from = modelNicNames.find((m) => lower(nicName) === lower(m) || lower(nicName).endsWith(`-${lower(m)}`));
  return from ?? nicName;
}

export function viewOf(vm: VmModel, nics: readonly NicModel[], modelNicNames: readonly string[]): NicConfiguration[] {
  return nics.map((n) => ({
    ...n.nic,
    name: viewName(n.nic.name ?? n.id.split("/").pop() ?? "", modelNicNames),
    primary: lower(n.id) === lower(vm.primaryNicId),
  }));
}

export function usable(entry: CachedEntry<unknown> | undefined, now: number, ttlMs: number): boolean {
  return entry !== undefined && entry.model !== undefined && !entry.stale && now - entry.readAt < ttlMs;
}

/** A NIC from its fresh cache row, else from Network RP (then stored, conditionally). */
async function nicOf(ref: NicRef, deps: VmNicDeps): Promise<NicModel> {
  const entry = await deps.cache.readEntry(ref);
  if (usable(entry, deps.clock.now(), deps.config.cacheTtlMs)) return entry?.model as NicModel;
  const nic = await deps.network.getNic(ref);
  await deps.cache.storeResource(ref, nic, entry?.rowEtag);
  return nic;
}

const isGone = (err: unknown) => err instanceof NotFoundError || err instanceof BeingDeletedError;

export async function writeVmNics(vm: VmModel, intents: readonly PoolIntent[], modelNicNames: readonly string[], deps: VmNicDeps): Promise<VmNicResult> {
  const done = (view: NicConfiguration[], written: number, gone: boolean): VmNicResult => ({
    vmId: vm.id,
    written,
    gone,
    view,
    outcomes: applyIntents(view, intents).outcomes,
  });
  if (isDeleting(vm.provisioningState)) return done([], 0, true);
  const refs: NicRef[] = [];
  for (const id of vm.nicIds) {
    const r = parseNicId(id);
    if (r.ok) refs.push(r.value);
  }
  const nics: NicModel[] = [];
  try {
    await mapLimit(
      refs.map((ref, i) => ({ ref, i })),
      deps.config.instanceConcurrency,
      async ({ ref, i }) => {
        nics[i] = await nicOf(ref, deps);
      },
    );
  } catch (err) {
    if (isGone(err)) return done([], 0, true);
    throw err;
  }
  const before = { nicIds: refs.map((r) => r.id), view: viewOf(vm, nics, modelNicNames) };
  let written = 0;
  // NICs one after another: each plan sees what the earlier writes left, so a pool lands on one NIC only.
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i] as NicRef;
    const planFor = (nic: NicModel) => {
      const view = viewOf(
        vm,
        nics.map((n, j) => (j === i ? nic : n)),
        modelNicNames,
      );
      const edit = applyIntents(view, intents);
      const mine = edit.nics?.[i];
      if (!mine || mine === view[i]) return undefined;
      const pools = intents.filter((intent) => intentSatisfied(view, intent) === false).map((intent) => `${intent.state}:${intent.backendPoolId}`);
      return { edit: mine.ipConfigurations, pools };
    };
    if (!planFor(nics[i] as NicModel)) continue;
    const result = await ifMatchWrite(
      {
        paced: ref,
        id: ref.id,
        logFields: { vmId: vm.id, nicId: ref.id, target: "nic" },
        plan: planFor,
        write: (nic, ipcs, opts) => deps.network.writeNic(ref, nic, ipcs, opts),
        read: () => deps.network.getNic(ref),
        row: {
          beginWrite: (clientRequestId) => deps.cache.beginWrite(ref, clientRequestId),
          markStale: (reason) => deps.cache.markStale(ref, reason),
          store: (nic, base, ours) => deps.cache.storeResource(ref, nic, base, ours),
          evict: () => deps.cache.evictResource(ref),
        },
        gone: isGone,
      },
      nics[i] as NicModel,
      deps,
    );
    if (result.kind === "gone") return done([], written, true);
    nics[i] = result.model;
    if (result.kind === "written") written++;
  }
  return { ...done(viewOf(vm, nics, modelNicNames), written, false), before };
}
