import { describe, expect, it } from "vitest";
import { CRP_WINDOWS, knownPolicy, NRP_WINDOWS, plannable, splitPolicyName } from "../../src/core/armBudgets";

describe("ARM budgets", () => {
  it("plans on a little less than each published window: at least 3 below, 2% below the large ones", () => {
    expect(plannable(CRP_WINDOWS.GetVMScaleSet["3Min"]!)).toBe(196);
    expect(plannable(CRP_WINDOWS.UpdateVMScaleSetVM["30Min"]!)).toBe(1_176);
    expect(plannable(NRP_WINDOWS.reads)).toBe(9_800);
    expect(plannable({ size: 100, windowMs: 60_000 })).toBe(97);
  });

  it("splits a header's window or bucket name into its policy and scope, with or without the provider prefix", () => {
    expect(splitPolicyName("Microsoft.Compute/GetVMScaleSet3Min")).toEqual({ policy: "GetVMScaleSet", scope: "3Min" });
    expect(splitPolicyName(" PutVM30Min ")).toEqual({ policy: "PutVM", scope: "30Min" });
    expect(splitPolicyName("GetVMSubscriptionMaximum")).toEqual({ policy: "GetVM", scope: "SubscriptionMaximum" });
    expect(splitPolicyName("UpdateVMScaleSetVMResource")).toEqual({ policy: "UpdateVMScaleSetVM", scope: "Resource" });
    expect(splitPolicyName("GetVMScaleSet")).toBeUndefined();
    expect(splitPolicyName("Microsoft.Network/reads;9999")).toBeUndefined();
  });

  it("knows the published samples' names for its own policies, and no other name", () => {
    expect(knownPolicy("PutVM")).toBe("UpdateVMScaleSetVM");
    expect(knownPolicy("UpdateVMScaleSet")).toBe("CreateVMScaleSet");
    expect(knownPolicy("HighCostGet")).toBe("HighCostGetVMScaleSet");
    expect(knownPolicy("GetVMScaleSetVM")).toBe("GetVMScaleSetVM");
    expect(knownPolicy("DeleteVMScaleSet")).toBeUndefined();
    // A header's text is input: a name that happens to be an object's own property is no policy.
    expect(knownPolicy("constructor")).toBeUndefined();
    expect(knownPolicy("toString")).toBeUndefined();
  });
});
