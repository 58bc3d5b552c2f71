import { describe, expect, it } from "vitest";
import { WritePacer } from "../../src/reconcile/writePacer";
import { instanceRefOf, scaleSetRef } from "../support/refs";

const SUB = "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d"; // made up
const vmss = scaleSetRef(`/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/big`);
const vm = (i: number) => instanceRefOf(`${vmss.id}/virtualMachines/${i}`);

describe("WritePacer memory", () => {
  it("forgets buckets that refilled to capacity: a process writing 5,000 instances over time keeps a few", () => {
    let now = 0;
    const pacer = new WritePacer(() => now);
    for (let i = 0; i < 5_000; i++) {
      pacer.take(vm(i));
      now += 1_000; // a write a second: each instance's bucket is full again five minutes later
    }
    expect(pacer.size).toBeLessThan(700);
  });

  it("keeps what still matters: a bucket that is spent or closed by a 429 still answers the same wait", () => {
    let now = 0;
    const pacer = new WritePacer(() => now);
    pacer.throttled(vmss, 600_000);
    for (let i = 0; i < 600; i++) pacer.take(vm(i));
    now += 60_000;
    for (let i = 600; i < 1_200; i++) pacer.take(vm(i));
    expect(pacer.waitMs(vmss)).toBe(540_000);
  });
});
