import { describe, expect, it } from "vitest";
import { crpRollsOutModel } from "../../src/core/upgradePolicy";

describe("upgrade policy", () => {
  it("leaves a model change to CRP under Automatic and Rolling, in any letter case", () => {
    expect(crpRollsOutModel("Automatic")).toBe(true);
    expect(crpRollsOutModel("rolling")).toBe(true);
  });

  it("updates each instance itself under Manual or when no mode is given", () => {
    expect(crpRollsOutModel("Manual")).toBe(false);
    expect(crpRollsOutModel(undefined)).toBe(false);
    expect(crpRollsOutModel("")).toBe(false);
  });
});
