import { describe, expect, it } from "vitest";
import { rebornInstanceIds, sameIncarnation } from "../../src/core/incarnation";
import type { InstanceModel } from "../../src/core/models";

const inst = (instanceId: string, vmId: string | undefined, etag = '"1"'): InstanceModel => ({
  id: `/x/virtualMachines/${instanceId}`,
  instanceId,
  etag,
  location: "eastus2",
  provisioningState: "Succeeded",
  nics: [],
  ...(vmId ? { vmId } : {}),
});

describe("incarnation: which VM an instance body describes", () => {
  it("the same ID and ETag are not the same VM: only equal, known vmIds are", () => {
    expect(sameIncarnation(inst("3", "a"), inst("3", "a"))).toBe(true);
    expect(sameIncarnation(inst("3", "a"), inst("3", "b"))).toBe(false);
    expect(sameIncarnation(inst("3", undefined), inst("3", undefined))).toBe(false);
  });

  it("names the instance IDs a new VM took over; rows without a vmId or instances not listed are not called reborn", () => {
    const earlier = [inst("0", "a"), inst("1", "b"), inst("2", undefined), inst("3", "d")];
    const live = [inst("0", "a"), inst("1", "B2"), inst("2", "c")];
    expect(rebornInstanceIds(earlier, live)).toEqual(["1"]);
  });
});
