import { describe, expect, it } from "vitest";
import { checkedHandover } from "../../src/reconcile/leaseHandover";
import { parseVmId } from "../../src/core/resourceIds";
import { scaleSetRef } from "../support/refs";

/** What the last lease holder left for the next: input from storage, restored only within bounds (pure). */
describe("checkedHandover", () => {
  const SUB = "00000000-0000-0000-0000-0000000000b1";
  const ref = scaleSetRef(
    `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-hand`,
  );
  const NOW = Date.parse("2026-12-02T10:00:00Z");
  const own = `vmss|${ref.key}`;

  it("restores the scale set's own bucket and its instances' buckets as they were left", () => {
    const text = JSON.stringify({
      [own]: { tokens: -4, at: NOW + 60_000 },
      [`vm|${ref.key}/virtualmachines/12`]: { tokens: 2, at: NOW },
    });
    expect(checkedHandover(text, ref, NOW)).toEqual({
      [own]: { tokens: -4, at: NOW + 60_000 },
      [`vm|${ref.key}/virtualmachines/12`]: { tokens: 2, at: NOW },
    });
  });

  it("drops a bucket that would close the budget beyond a capped Retry-After, or hold absurd tokens", () => {
    const sevenHours = 7 * 3_600_000;
    expect(checkedHandover(JSON.stringify({ [own]: { tokens: 1, at: NOW + sevenHours } }), ref, NOW)).toEqual({});
    expect(checkedHandover(JSON.stringify({ [own]: { tokens: -1e9, at: NOW } }), ref, NOW)).toEqual({});
    expect(checkedHandover(JSON.stringify({ [own]: { tokens: 1, at: NOW + 6 * 3_600_000 } }), ref, NOW)).toEqual({
      [own]: { tokens: 1, at: NOW + 6 * 3_600_000 },
    });
  });

  it("ignores an instance name that is not a number (a path into another scale set's key)", () => {
    const text = JSON.stringify({ [`vm|${ref.key}/virtualmachines/1/../../other`]: { tokens: 1, at: NOW } });
    expect(checkedHandover(text, ref, NOW)).toEqual({});
  });

  it("refuses a handover that is not an object of buckets, and restores nothing for a VM target", () => {
    expect(() => checkedHandover("[1,2]", ref, NOW)).toThrow("handover is not an object of buckets");
    expect(() => checkedHandover("null", ref, NOW)).toThrow("handover is not an object of buckets");
    const vm = parseVmId(`/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm-1`);
    if (!vm.ok) throw new Error(vm.reason);
    expect(checkedHandover(JSON.stringify({ [own]: { tokens: 1, at: NOW } }), vm.value, NOW)).toEqual({});
  });
});
