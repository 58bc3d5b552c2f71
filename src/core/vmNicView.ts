import type { NicModel, VmModel, VmNicConfiguration } from "./models";
import { applyIntents, type IntentOutcome, type NicConfiguration, type PoolIntent } from "./networkProfile";

/**
 * A VM's NIC resources seen as the NIC configurations of a scale set, pure: the reconcile writes through this view,
 * the plan plans on it and the status views observe on it, so the three agree on which NIC a declaration lands on
 * and on when it cannot be placed with certainty.
 */

const lower = (s: string | undefined) => (s ?? "").toLowerCase();

export interface VmView {
  /** The VM's NICs seen as NIC configurations: named by the configuration they were built from (Flexible), else by
   *  their resource name; `primary` as Azure flags it. */
  nics: NicConfiguration[];
  /** Why a NIC could not be matched to one of the VM's NIC configurations with certainty. */
  unplaced: string[];
  /** Several NICs and none flagged primary: nothing may be placed "on the primary NIC". */
  noPrimary: boolean;
}

const sameNames = (a: readonly string[], b: readonly string[]) => {
  const x = a.map(lower).sort();
  const y = b.map(lower).sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

/** A scale set model's NIC configurations as a VM's own are described: what its Flexible VMs' NICs were built from. */
export function modelNicConfigurations(nics: readonly NicConfiguration[]): VmNicConfiguration[] {
  return nics.map((n) => ({
    name: n.name,
    primary: n.primary,
    ipConfigurationNames: (n.ipConfigurations ?? []).map((c) => c.name),
  }));
}

/**
 * Maps a VM's NICs from what Azure states, never from NIC names (a Flexible VM's NICs are not named after its
 * configurations, cloud-provider-azure issues 2670 and 4823): the primary NIC is the one flagged primary (by the VM
 * or the NIC itself), or the only one; a NIC of a Flexible VM is the one of the VM's own NIC configurations with its
 * primary flag and its ip configuration names. A Flexible VM that answers only its NIC references (the API
 * specification's other shape) is mapped on its scale set model's NIC configurations (`modelConfigs`), from which CRP
 * built its NICs, by the same rule. A NIC that matches none, or several, is left unplaced with the reason.
 */
export function viewOf(vm: VmModel, nics: readonly NicModel[], modelConfigs?: readonly VmNicConfiguration[]): VmView {
  const flagged = nics.findIndex((n) => lower(n.id) === lower(vm.primaryNicId) || n.nic["primary"] === true);
  const primary = flagged >= 0 ? flagged : nics.length === 1 ? 0 : -1;
  const own = vm.nicConfigurations ?? [];
  const configs = own.length > 0 ? own : vm.scaleSetId !== undefined ? (modelConfigs ?? []) : [];
  const configPrimary = (i: number) => configs[i]?.primary === true || configs.length === 1;
  const unplaced: string[] = [];
  const vmName = vm.id.split("/").pop() ?? vm.id;
  const names = nics.map((n, i) => {
    const resourceName = n.nic.name ?? n.id.split("/").pop() ?? "";
    if (configs.length === 0) return resourceName;
    const ipNames = (n.nic.ipConfigurations ?? []).map((c) => c.name);
    const matches = configs
      .map((c, ci) => ({ c, ci }))
      .filter(
        ({ c, ci }) =>
          sameNames(c.ipConfigurationNames, ipNames) && (primary < 0 || configPrimary(ci) === (i === primary)),
      );
    if (matches.length === 1) return matches[0]?.c.name ?? resourceName;
    unplaced.push(
      `NIC ${resourceName} of VM ${vmName} matches ${matches.length === 0 ? "none" : `${matches.length}`} of the VM's NIC configurations by primary flag and ip configuration names (${ipNames.join(", ")})`,
    );
    return resourceName;
  });
  // Two NICs taken for one configuration: neither is certain.
  for (const c of configs) {
    const claimed = names.map((n, i) => ({ n, i })).filter(({ n }) => lower(n) === lower(c.name));
    if (claimed.length > 1) {
      for (const { i } of claimed) names[i] = nics[i]?.nic.name ?? "";
      unplaced.push(`NICs of VM ${vmName} match NIC configuration "${c.name}" more than once`);
    }
  }
  return {
    nics: nics.map((n, i) => ({ ...n.nic, name: names[i] ?? "", primary: i === primary })),
    unplaced,
    noPrimary: nics.length > 1 && primary < 0,
  };
}

/** Why an intent cannot be placed on this VM with certainty (undefined: it can be tried). */
export function uncertain(view: VmView, intent: PoolIntent): string | undefined {
  const named = intent.selector.kind !== "primary" ? intent.selector.nic : undefined;
  if (named === undefined && view.noPrimary)
    return `the VM has ${view.nics.length} NICs and none is flagged primary: name the NIC in the declaration ("nic/ipconfig")`;
  if (named !== undefined && view.unplaced.length > 0 && !view.nics.some((n) => lower(n.name) === lower(named)))
    return `network interface configuration "${named}" cannot be placed with certainty: ${view.unplaced.join("; ")}`;
  return undefined;
}

/** The intents' outcomes on the view: those that cannot be placed with certainty fail with the reason. */
export function outcomesOn(view: VmView, intents: readonly PoolIntent[]): IntentOutcome[] {
  const placed = applyIntents(view.nics, intents).outcomes;
  return intents.map((intent, i) => {
    const reason = uncertain(view, intent);
    return reason ? { ok: false, reason } : (placed[i] as IntentOutcome);
  });
}
