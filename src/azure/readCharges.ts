import type { CrpReadPolicy } from "../core/armBudgets";

/**
 * What a GET costs beyond ARM's read bucket, told from its path alone (as CRP and NRP charge it; sim/README.md,
 * "Throttling"): a scale set GET `GetVMScaleSet`, an instance GET `GetVMScaleSetVM`, a VM GET `GetVM`, every LIST of
 * scale sets, instances or VMs the shared `HighCostGetVMScaleSet`, an operation poll `GetOperation`, and anything NRP
 * answers (`Microsoft.Network`, and a scale set's NICs under `Microsoft.Compute`) NRP's 5-minute read budget.
 */
export interface ReadCharge {
  subscriptionId: string;
  crp?: CrpReadPolicy;
  nrp?: true;
  /** The resource CRP's per-resource bucket is kept for (lower-case path), where it has one. */
  resource?: string;
}

export function readChargeOf(path: string): ReadCharge | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const s = decoded.toLowerCase().replace(/\/+$/, "").split("/").slice(1);
  if (s[0] !== "subscriptions" || !s[1]) return undefined;
  const subscriptionId = s[1];
  // After `providers/<namespace>`: the provider's own segments.
  const at = s.indexOf("providers");
  if (at < 0) return { subscriptionId };
  const ns = s[at + 1];
  const p = s.slice(at + 2);
  const resource = s.join("/");
  if (ns === "microsoft.network") return { subscriptionId, nrp: true };
  if (ns !== "microsoft.compute") return { subscriptionId };
  if (p[0] === "locations" && p[2] === "operations") return { subscriptionId, crp: "GetOperation" };
  if (p[0] === "virtualmachinescalesets") {
    // A scale set's NICs (and their ip configurations) are NRP's, at any depth.
    if (p.includes("networkinterfaces")) return { subscriptionId, nrp: true };
    if (p.length === 1 || (p.length === 3 && p[2] === "virtualmachines"))
      return { subscriptionId, crp: "HighCostGetVMScaleSet" };
    if (p.length === 2) return { subscriptionId, crp: "GetVMScaleSet", resource };
    if (p.length === 4 && p[2] === "virtualmachines") return { subscriptionId, crp: "GetVMScaleSetVM", resource };
    return { subscriptionId };
  }
  if (p[0] === "virtualmachines") {
    if (p.length === 1) return { subscriptionId, crp: "HighCostGetVMScaleSet" };
    if (p.length === 2) return { subscriptionId, crp: "GetVM", resource };
  }
  return { subscriptionId };
}
