import type { Outcome, StoredDeclaration } from "../core/declarations";
import type { ScaleSetModel, VmModel } from "../core/models";
import { applyIntents, intentSatisfied, type PoolIntent } from "../core/networkProfile";
import type { ComputePort, ModelCache } from "../core/ports";
import { parseVmId, sameResource, type ScaleSetRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";
import { modelNicConfigurations } from "../core/vmNicView";
import { writeVmNics, type VmNicDeps, type VmNicResult } from "./vmNics";
import type { ComeBack } from "./passResult";

/**
 * Membership held on VMs' NICs, for both targets that have them. A Flexible scale set: its model shapes only the VMs
 * to come (written before this, like a Uniform model), and each existing VM's membership is on its NIC resources; a
 * standalone VM has only those. The VMs are found as Azure lists them: the resource
 * group's VMs whose `virtualMachineScaleSet.id` is this scale set.
 */

/** Orchestration modes poolsync knows; anything else is refused rather than guessed at. */
export function orchestrationModeOf(model: ScaleSetModel): "Uniform" | "Flexible" | undefined {
  const mode = (model.orchestrationMode ?? "Uniform").toLowerCase();
  return mode === "uniform" ? "Uniform" : mode === "flexible" ? "Flexible" : undefined;
}

/**
 * Keeps a row per VM (and, cache on or off, which target it serves), so an event that names only the VM (or its NIC)
 * leads to the target that declared it.
 */
export async function rememberVm(vm: VmModel, cache: ModelCache): Promise<void> {
  const ref = parseVmId(vm.id);
  if (!ref.ok) return;
  const entry = await cache.readEntry(ref.value);
  await cache.storeResource(ref.value, vm, entry?.rowEtag);
}

export async function writeFlexVms(
  ref: ScaleSetRef,
  model: ScaleSetModel,
  intents: readonly PoolIntent[],
  compute: ComputePort,
  deps: VmNicDeps,
): Promise<{ results: VmNicResult[]; comeBack?: ComeBack }> {
  const listed = await compute.listVms(ref);
  const members = listed.filter((vm) => vm.scaleSetId !== undefined && sameResource(vm.scaleSetId, ref.id));
  await mapLimit(members, 8, (vm) => rememberVm(vm, deps.cache));
  const modelConfigs = modelNicConfigurations(model.nics);
  const results: VmNicResult[] = [];
  // The first VM whose write comes back stops the others from starting (those under way finish).
  let later: ComeBack | undefined;
  await mapLimit(members, deps.config.instanceConcurrency, async (vm) => {
    if (later) return;
    const result = await writeVmNics(vm, intents, modelConfigs, deps);
    if (result.comeBack) later ??= result.comeBack;
    else results.push(result);
  });
  return { results, ...(later ? { comeBack: later } : {}) };
}

/**
 * Each declaration's outcome from where it had to land: the model (Flexible) and every VM still there. A VM on
 * which it cannot be placed (no ip configuration of that name or IP version) fails it, naming the VM.
 */
export function vmOutcomes(
  declarations: readonly StoredDeclaration[],
  intents: readonly PoolIntent[],
  vms: readonly VmNicResult[],
  model: ScaleSetModel | undefined,
  failed: (reason: string) => Omit<Outcome, "at">,
): Omit<Outcome, "at">[] {
  const live = vms.filter((v) => !v.gone);
  const modelEdit = model ? applyIntents(model.nics, intents) : undefined;
  return declarations.map((d, i) => {
    const intent = intents[i] as PoolIntent;
    const placed = modelEdit?.outcomes[i];
    if (placed && !placed.ok) return failed(placed.reason);
    for (const vm of live) {
      const o = vm.outcomes[i];
      if (o && !o.ok) return failed(`VM ${vm.vmId.split("/").pop() ?? vm.vmId}: ${o.reason}`);
    }
    const everywhere =
      (model === undefined || intentSatisfied(model.nics, intent) === true) &&
      live.every((vm) => intentSatisfied(vm.view, intent) === true);
    return {
      kind: "applied",
      ...(model ? { appliedEtag: model.etag } : {}),
      ...(d.state === "absent" && everywhere ? { appliedEverywhere: true } : {}),
    };
  });
}
