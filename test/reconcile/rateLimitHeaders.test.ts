import { describe, expect, it } from "vitest";
import { observationsOf, parseRemainingResource } from "../../src/azure/rateLimitHeaders";
import { learnWriteBudget } from "../../src/pacing/learnWriteBudget";
import { instanceRef } from "../../src/core/resourceIds";
import { WritePacer } from "../../src/pacing/writePacer";
import { scaleSetRef } from "../support/refs";

const SUB = "00000000-0000-0000-0000-0000000000b1";
const VMSS = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-1`;
const headers = (h: Record<string, string>) => (name: string) => h[name];

describe("x-ms-ratelimit-remaining-* headers: what the server says is left, for every host at once", () => {
  it("reads CRP's header as CRP sends it (recorded VMSS PUT)", () => {
    expect(
      parseRemainingResource(
        "Microsoft.Compute/CreateVMScaleSetSubscriptionMaximum;1124,Microsoft.Compute/CreateVMScaleSetResource;35,Microsoft.Compute/VMScaleSetBatchedVMRequestsSubscriptionMaximum;17999,Microsoft.Compute/VmssQueuedVMOperations;0",
      ),
    ).toEqual([
      ["Microsoft.Compute/CreateVMScaleSetSubscriptionMaximum", 1124],
      ["Microsoft.Compute/CreateVMScaleSetResource", 35],
      ["Microsoft.Compute/VMScaleSetBatchedVMRequestsSubscriptionMaximum", 17999],
      ["Microsoft.Compute/VmssQueuedVMOperations", 0],
    ]);
    expect(parseRemainingResource("garbage,Microsoft.Compute/X;7")).toEqual([["Microsoft.Compute/X", 7]]);
  });

  it("a scale set PUT's answer gives ARM's write bucket and the scale set's own and subscription CRP buckets", () => {
    const got = observationsOf(
      "PUT",
      VMSS,
      headers({
        "x-ms-ratelimit-remaining-subscription-writes": "150",
        "x-ms-ratelimit-remaining-resource":
          "Microsoft.Compute/CreateVMScaleSetSubscriptionMaximum;1400,Microsoft.Compute/CreateVMScaleSetResource;3",
      }),
    );
    expect(got).toEqual([
      { kind: "armWrites", subscriptionId: SUB, remaining: 150 },
      {
        kind: "scaleSetWrites",
        scope: "subscription",
        target: expect.objectContaining({ key: VMSS.toLowerCase() }),
        remaining: 1400,
      },
      {
        kind: "scaleSetWrites",
        scope: "resource",
        target: expect.objectContaining({ key: VMSS.toLowerCase() }),
        remaining: 3,
      },
    ]);
  });

  it("an instance PUT's answer names the instance's bucket; a GET gives ARM's reads only", () => {
    const vm = observationsOf(
      "PUT",
      `${VMSS}/virtualMachines/3`,
      headers({ "x-ms-ratelimit-remaining-resource": "Microsoft.Compute/UpdateVMScaleSetVMResource;5" }),
    );
    expect(vm).toEqual([
      {
        kind: "instanceWrites",
        scope: "resource",
        target: expect.objectContaining({ kind: "instance", instanceId: "3" }),
        remaining: 5,
      },
    ]);
    expect(
      observationsOf(
        "GET",
        VMSS,
        headers({
          "x-ms-ratelimit-remaining-subscription-reads": "99",
          "x-ms-ratelimit-remaining-resource": "Microsoft.Compute/GetVMScaleSetResource;30",
        }),
      ),
    ).toEqual([{ kind: "armReads", subscriptionId: SUB, remaining: 99 }]);
    expect(
      observationsOf(
        "GET",
        "/providers/Microsoft.Compute/operations",
        headers({ "x-ms-ratelimit-remaining-subscription-reads": "1" }),
      ),
    ).toEqual([]);
  });

  it("reads the published window names (<Policy>3Min / <Policy>30Min) as the subscription's budget, and unknown names without error", () => {
    // As every public sample names them (Troubleshooting API throttling errors; azure-cli issue 15765).
    expect(
      parseRemainingResource("Microsoft.Compute/GetVMScaleSet3Min;197,Microsoft.Compute/GetVMScaleSet30Min;1297"),
    ).toEqual([
      ["Microsoft.Compute/GetVMScaleSet3Min", 197],
      ["Microsoft.Compute/GetVMScaleSet30Min", 1297],
    ]);
    const vmss = observationsOf(
      "PUT",
      VMSS,
      headers({
        "x-ms-ratelimit-remaining-resource":
          "Microsoft.Compute/CreateVMScaleSet3Min;140,Microsoft.Compute/CreateVMScaleSet30Min;1188,Microsoft.Compute/VmssQueuedVMOperations;0,Microsoft.Compute/SomethingNew9Min;3",
      }),
    );
    expect(vmss).toEqual([
      {
        kind: "scaleSetWrites",
        scope: "subscription",
        window: "3Min",
        target: expect.objectContaining({ key: VMSS.toLowerCase() }),
        remaining: 140,
      },
      {
        kind: "scaleSetWrites",
        scope: "subscription",
        window: "30Min",
        target: expect.objectContaining({ key: VMSS.toLowerCase() }),
        remaining: 1188,
      },
    ]);
    const vm = observationsOf(
      "PUT",
      `${VMSS}/virtualMachines/3`,
      headers({
        "x-ms-ratelimit-remaining-resource":
          "Microsoft.Compute/PutVM3Min;237,Microsoft.Compute/PutVM30Min;1188,Microsoft.Compute/HighCostGet30Min;799",
      }),
    );
    expect(vm.map((o) => [o.kind, "scope" in o ? o.scope : "", o.remaining])).toEqual([
      ["instanceWrites", "subscription", 237],
      ["instanceWrites", "subscription", 1188],
    ]);
    expect(() =>
      observationsOf("PUT", VMSS, headers({ "x-ms-ratelimit-remaining-resource": ";;,Microsoft.Compute/;x,===" })),
    ).not.toThrow();
  });

  it("without any budget header the documented budgets apply: 12 writes to a scale set, then one each 15 s", () => {
    const now = 0;
    const pacer = new WritePacer(() => now);
    const ref = scaleSetRef(VMSS);
    for (const o of observationsOf("PUT", VMSS, headers({}))) learnWriteBudget(pacer, o);
    for (let i = 0; i < 12; i++) {
      expect(pacer.waitMs(ref)).toBe(0);
      pacer.take(ref);
    }
    expect(pacer.waitMs(ref)).toBeGreaterThan(0);
  });

  it("a 3Min window nearly spent slows this host's writes to every scale set of the subscription", () => {
    const now = 0;
    const pacer = new WritePacer(() => now);
    for (const o of observationsOf(
      "PUT",
      VMSS,
      headers({ "x-ms-ratelimit-remaining-resource": "Microsoft.Compute/CreateVMScaleSet3Min;0" }),
    ))
      learnWriteBudget(pacer, o);
    expect(pacer.waitMs(scaleSetRef(VMSS.replace("vmss-1", "vmss-2")))).toBeGreaterThan(0);
  });

  it("the write pacer plans on no more than the server reports (others' writes), never on more than it knows itself", () => {
    let now = 0;
    const pacer = new WritePacer(() => now);
    const ref = scaleSetRef(VMSS);
    expect(pacer.waitMs(ref)).toBe(0);
    // Another host spent the scale set's bucket: CRP says 0 left.
    for (const o of observationsOf(
      "PUT",
      VMSS,
      headers({ "x-ms-ratelimit-remaining-resource": "Microsoft.Compute/CreateVMScaleSetResource;0" }),
    ))
      learnWriteBudget(pacer, o);
    expect(pacer.waitMs(ref)).toBe(60_000);
    // A higher figure later does not raise what this host knows it spent.
    for (let i = 0; i < 2; i++)
      learnWriteBudget(pacer, { kind: "scaleSetWrites", scope: "resource", target: ref, remaining: 12 });
    expect(pacer.waitMs(ref)).toBe(60_000);
    now = 60_000;
    expect(pacer.waitMs(ref)).toBe(0);
    // ARM's write bucket: 20 under the 200 it reports, the margin the pacer aims below ARM's bucket.
    learnWriteBudget(pacer, { kind: "armWrites", subscriptionId: SUB, remaining: 20 });
    expect(pacer.waitMs(instanceRef(ref, "0"))).toBe(100);
    // Inside the margin, every host that reads the figure owes the difference: it waits for that much refill (ARM's
    // bucket at 10 a second), so hosts that together spend faster than ARM refills slow down before a 429.
    learnWriteBudget(pacer, { kind: "armWrites", subscriptionId: SUB, remaining: 0 });
    expect(pacer.waitMs(instanceRef(ref, "0"))).toBe(21 * 100);
  });

  it("what one holder knows of a scale set's budgets reaches the next holder (snapshot → restore)", () => {
    const now = 5_000;
    const a = new WritePacer(() => now);
    const b = new WritePacer(() => now);
    const ref = scaleSetRef(VMSS);
    for (let i = 0; i < 12; i++) a.take(ref);
    a.take(instanceRef(ref, "1"));
    const snap = a.snapshot(ref);
    expect(Object.keys(snap).sort()).toEqual(
      [`vm|${VMSS.toLowerCase()}/virtualmachines/1`, `vmss|${VMSS.toLowerCase()}`].sort(),
    );
    expect(b.waitMs(ref)).toBe(0);
    b.restore(JSON.parse(JSON.stringify(snap)));
    expect(b.waitMs(ref)).toBe(60_000);
  });
});
