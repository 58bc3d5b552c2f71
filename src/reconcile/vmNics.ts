import { BeingDeletedError, NotFoundError, RefusedError } from "../core/errors";
import { isDeleting, type NicModel, type VmModel, type VmNicConfiguration } from "../core/models";
import {
  applyIntents,
  intentSatisfied,
  type IntentOutcome,
  type NicConfiguration,
  type PoolIntent,
} from "../core/networkProfile";
import type { CachedEntry, ModelCache, NetworkPort } from "../core/ports";
import { parseNicId, type NicRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";
import { inScopes, type Scope } from "../core/scopes";
import { ifMatchWrite, type IfMatchDeps } from "./ifMatchWrite";
import type { ComeBack } from "./passResult";
import { outcomesOn, uncertain, viewOf, type VmView } from "../core/vmNicView";

export { viewOf };

/**
 * The membership of a VM that exists outside a Uniform scale set lives on its NIC resources. The VM's NICs are
 * seen as the NIC configurations of a scale set (same ip configuration shape), so the one pure edit and the one
 * If-Match loop serve them: per NIC that differs, GET it, change only the selected ip configuration's pools,
 * PUT it whole with If-Match on its weak ETag; a 412 re-reads that NIC and recomputes.
 */

export interface VmNicDeps extends IfMatchDeps {
  network: NetworkPort;
  cache: ModelCache;
  /**
   * Use only NIC rows read after this time, and count them as ARM's word (Infinity: read every NIC from Network
   * RP). Undefined: any fresh row, which then proves nothing.
   */
  observedSince?: number;
  config: IfMatchDeps["config"] & { cacheTtlMs: number; instanceConcurrency: number; scopes: readonly Scope[] };
}

/**
 * NIC IDs come from ARM's VM model and would be read and PUT as given: each must be inside POOLSYNC_SCOPES and in the
 * VM's own subscription (Azure attaches no other) before any GET or PUT, or the whole target is refused.
 */
export function checkedNicRefs(vm: VmModel, scopes: readonly Scope[]): NicRef[] {
  const vmSubscription = vm.id.split("/")[2]?.toLowerCase();
  const refs: NicRef[] = [];
  for (const id of vm.nicIds) {
    const r = parseNicId(id);
    if (!r.ok) throw new RefusedError(`NIC ${id} of ${vm.id}: ${r.reason}`);
    const outside = !inScopes(scopes, r.value.subscriptionId, r.value.resourceGroup);
    if (outside || r.value.subscriptionId.toLowerCase() !== vmSubscription)
      throw new RefusedError(
        `NIC ${id} of ${vm.id} is outside POOLSYNC_SCOPES or the VM's subscription: poolsync reads and writes nothing there`,
      );
    refs.push(r.value);
  }
  return refs;
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
  /**
   * Every NIC in `view` is as ARM answered in this pass (read, or our write's answer), not a cached row: only such a
   * view may finish a declaration.
   */
  observed: boolean;
  /** Each NIC as last seen (its ID and ETag): what a write of ours still in doubt could change. */
  resources: Array<{ id: string; etag: string }>;
  /** Set when a NIC's write came back (its budget spent, 412s in a row, the lease lost): the rest are not written. */
  comeBack?: ComeBack;
}

export function usable(entry: CachedEntry<unknown> | undefined, now: number, ttlMs: number): boolean {
  return entry !== undefined && entry.model !== undefined && !entry.stale && now - entry.readAt < ttlMs;
}

/**
 * A NIC from its fresh cache row (read since `observedSince`, when given), else from Network RP (then stored,
 * conditionally); `observed` when it is ARM's word from this pass.
 */
async function nicOf(ref: NicRef, deps: VmNicDeps): Promise<{ nic: NicModel; observed: boolean }> {
  const entry = await deps.cache.readEntry(ref);
  const since = deps.observedSince;
  if (usable(entry, deps.clock.now(), deps.config.cacheTtlMs) && (since === undefined || entry!.readAt > since))
    return { nic: entry?.model as NicModel, observed: since !== undefined };
  const nic = await deps.network.getNic(ref);
  await deps.cache.storeResource(ref, nic, entry?.rowEtag);
  return { nic, observed: true };
}

const isGone = (err: unknown) => err instanceof NotFoundError || err instanceof BeingDeletedError;

/**
 * `modelConfigs`: a Flexible VM's scale set model's NIC configurations, on which a VM that answers only its NIC
 * references is mapped (core/vmNicView); a NIC is never matched by its name.
 * Long: the NICs are written one after another, each plan seeing what the earlier writes left: the loop holds that
 * running view.
 */
export async function writeVmNics(
  vm: VmModel,
  intents: readonly PoolIntent[],
  modelConfigs: readonly VmNicConfiguration[] | undefined,
  deps: VmNicDeps,
): Promise<VmNicResult> {
  // Which NICs' state came from ARM in this pass.
  const observed: boolean[] = [];
  const done = (view: VmView, written: number, gone: boolean): VmNicResult => ({
    vmId: vm.id,
    written,
    gone,
    view: view.nics,
    outcomes: outcomesOn(view, intents),
    // A VM that went away is judged by ARM's own answer (its 404, or Deleting).
    observed: gone || observed.every(Boolean),
    resources: gone ? [] : nics.map((n) => ({ id: n.id, etag: n.etag })),
  });
  const nics: NicModel[] = [];
  const none: VmView = { nics: [], unplaced: [], noPrimary: false };
  if (isDeleting(vm.provisioningState)) return done(none, 0, true);
  const refs = checkedNicRefs(vm, deps.config.scopes);
  try {
    await mapLimit(
      refs.map((ref, i) => ({ ref, i })),
      deps.config.instanceConcurrency,
      async ({ ref, i }) => {
        const got = await nicOf(ref, deps);
        nics[i] = got.nic;
        observed[i] = got.observed;
      },
    );
  } catch (err) {
    if (isGone(err)) return done(none, 0, true);
    throw err;
  }
  const before = { nicIds: refs.map((r) => r.id), view: viewOf(vm, nics, modelConfigs).nics };
  let written = 0;
  // NICs one after another: each plan sees what the earlier writes left, so a pool lands on one NIC only.
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i] as NicRef;
    const planFor = (nic: NicModel) => {
      const view = viewOf(
        vm,
        nics.map((n, j) => (j === i ? nic : n)),
        modelConfigs,
      );
      // Only what can be placed with certainty is written; the rest fails with its reason (outcomesOn).
      const certain = intents.filter((intent) => uncertain(view, intent) === undefined);
      const edit = applyIntents(view.nics, certain);
      const mine = edit.nics?.[i];
      if (!mine || mine === view.nics[i]) return undefined;
      const pools = certain
        .filter((intent) => intentSatisfied(view.nics, intent) === false)
        .map((intent) => `${intent.state}:${intent.backendPoolId}`);
      return { edit: mine.ipConfigurations, pools };
    };
    if (!planFor(nics[i] as NicModel)) continue;
    const result = await ifMatchWrite(
      {
        paced: ref,
        id: ref.id,
        resourceKind: "nic",
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
    if (result.kind === "come-back") return { ...done(none, written, false), comeBack: result.comeBack };
    if (result.kind === "gone") return done(none, written, true);
    // A write's answer, or a re-read (after a 412), is ARM's word; "unchanged" from the first state is only as good
    // as that state.
    if (result.kind === "written" || result.model !== nics[i]) observed[i] = true;
    nics[i] = result.model;
    if (result.kind === "written") written++;
  }
  return { ...done(viewOf(vm, nics, modelConfigs), written, false), before };
}
