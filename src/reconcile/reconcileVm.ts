import { finishes, toIntent, type Outcome, type StoredDeclaration } from "../core/declarations";
import { BeingDeletedError } from "../core/errors";
import { isDeleting } from "../core/models";
import type { VmRef } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { activeDeclarations } from "./activeDeclarations";
import { CallStats } from "./callStats";
import { DriftWatch, vmDriftView } from "./driftWatch";
import { OutcomeRecorder } from "./recordOutcomes";
import { rememberVm, vmOutcomes } from "./vmMembership";
import { settleStop } from "./passStop";
import { nextStep, reportFieldsOf } from "./passResult";
import {
  doubtHold,
  doubtHoldMs,
  observedSinceOf,
  reporter,
  type ReconcileDeps,
  type ReconcileReport,
  type ReconcileTrigger,
} from "./vocabulary";
import { writeVmNics } from "./vmNics";

/**
 * A declared VM (standalone, in an availability set, or one VM of a Flexible scale set): no model, only its NIC
 * resources. Same shape as the scale set reconcile: re-read, write the difference with If-Match, say when to
 * come back.
 * Long: the VM pass's steps share its drift watch and outcome recorder, the same shape as reconcileScaleSet's.
 */
export async function reconcileVm(
  ref: VmRef,
  trigger: ReconcileTrigger,
  deps: ReconcileDeps,
): Promise<ReconcileReport> {
  const passStartedAt = deps.clock.now();
  const stats = new CallStats();
  const compute = stats.wrap(deps.compute);
  const network = stats.wrapNetwork(deps.network);
  const { config } = deps;
  let written = 0;
  const report = reporter(ref, trigger, stats, deps, () => written);

  const declarations = await deps.declarations.listForTarget(ref);
  if (declarations.length === 0) return report("no-declarations", 0);
  const outcomes = new OutcomeRecorder(ref, deps.declarations, deps.clock);
  const recordAll = (ds: StoredDeclaration[], outcome: Omit<Outcome, "at">) => outcomes.recordAll(ds, outcome);
  if (!inScopes(config.scopes, ref.subscriptionId, ref.resourceGroup)) {
    await recordAll(declarations, { kind: "refused", reason: "VM is outside POOLSYNC_SCOPES" });
    return report("refused", declarations.length, { reason: "VM outside POOLSYNC_SCOPES" });
  }
  const { active } = await activeDeclarations(ref, declarations, outcomes, config, deps.clock.now());
  if (active.length === 0)
    return report("refused", declarations.length, {
      reason: "every pool outside POOLSYNC_SCOPES or POOLSYNC_BINDINGS",
    });
  const intents = active.map(toIntent);
  const drift = new DriftWatch(ref, active, intents, deps);
  // As a scale set's pass does: a stop of this pass (a give-up too) does not undo what an earlier pass applied.
  const failure = {
    target: ref,
    trigger,
    active,
    declarations: declarations.length,
    outcomes,
    report,
    spare: (d: StoredDeclaration) => d.outcome.kind === "applied",
  };

  try {
    // One GET: a VM's NIC list changes rarely, but a VM that is gone must be seen as gone.
    const vm = await compute.getVm(ref);
    await rememberVm(vm, deps.cache);
    if (isDeleting(vm.provisioningState)) throw new BeingDeletedError(`${ref.id} is being deleted`);
    const observedSince = observedSinceOf(trigger);
    const result = await writeVmNics(vm, intents, undefined, {
      ...deps,
      network,
      ...(observedSince !== undefined ? { observedSince } : {}),
    });
    if (result.comeBack) {
      await drift.settle(false);
      return settleStop({ comeBack: result.comeBack }, failure, deps);
    }
    written = result.written;
    if (result.gone) throw new BeingDeletedError(`${ref.id} or its NIC went away during the reconcile`);
    const each = vmOutcomes(active, intents, [result], undefined, (reason) =>
      outcomes.failed(reason, config.failedRetryMs),
    );
    if (!result.observed && observedSince === undefined && active.some((d, i) => finishes(d, each[i]!))) {
      // Finished only from what ARM holds: the NICs this judged from older cache rows are read again.
      await drift.settle(false);
      return reconcileVm(ref, { ...trigger, provenSince: passStartedAt }, deps);
    }
    // A write of ours that may still land on one of its NICs holds back every finish until it cannot.
    const doubt = doubtHoldMs(deps, result.resources);
    await Promise.all(
      active.map((d, i) =>
        doubt > 0 && finishes(d, each[i]!) ? Promise.resolve() : outcomes.record(d, each[i] as Omit<Outcome, "at">),
      ),
    );
    drift.observe(vmDriftView(result));
    await drift.settle(true);
    const next = nextStep([doubtHold(doubt)], trigger.attempt, config.maxAttempts);
    return report(stats.writes > 0 ? "applied" : "unchanged", declarations.length, reportFieldsOf(next));
  } catch (err) {
    await drift.settle(false);
    return settleStop({ error: err }, failure, deps);
  }
}
