import { describe, expect, it } from "vitest";
import { learnWriteBudget } from "../../src/pacing/learnWriteBudget";
import { WritePacer } from "../../src/pacing/writePacer";
import { instanceRefOf, scaleSetRef } from "../support/refs";

const SUB = "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d"; // made up
const VMSS = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/web`;

const pacerAt = (now: number) => new WritePacer(() => now);

describe("learning a write budget from ARM's answers", () => {
  it("plans on ARM's write bucket with its 20-write margin kept below what ARM reports", () => {
    const pacer = pacerAt(0);
    learnWriteBudget(pacer, { kind: "armWrites", subscriptionId: SUB.toUpperCase(), remaining: 150 });
    expect(pacer.known(SUB)).toBe(130);
  });

  it("holds back a scale set's writes when CRP says its own bucket is spent", () => {
    const pacer = pacerAt(0);
    const target = scaleSetRef(VMSS);
    expect(pacer.waitMs(target)).toBe(0);
    learnWriteBudget(pacer, { kind: "scaleSetWrites", scope: "resource", target, remaining: 0 });
    expect(pacer.waitMs(target)).toBeGreaterThan(0);
    expect(pacer.known(SUB)).toBeUndefined();
  });

  it("counts what CRP says others spent of the subscription window an instance write counts in", () => {
    const pacer = pacerAt(0);
    const target = instanceRefOf(`${VMSS}/virtualMachines/0`);
    learnWriteBudget(pacer, { kind: "instanceWrites", scope: "subscription", window: "3Min", target, remaining: 40 });
    expect(pacer.counted(SUB, "vm-sub", "3Min")).toBe(200);
    expect(pacer.counted(SUB, "vmss-sub", "3Min")).toBeUndefined();
  });

  it("learns nothing from reads, or from a subscription figure that names no window", () => {
    const pacer = pacerAt(0);
    const target = scaleSetRef(VMSS);
    learnWriteBudget(pacer, { kind: "armReads", subscriptionId: SUB, remaining: 0 });
    learnWriteBudget(pacer, { kind: "scaleSetWrites", scope: "subscription", target, remaining: 0 });
    expect(pacer.size).toBe(0);
    expect(pacer.waitMs(target)).toBe(0);
  });
});
