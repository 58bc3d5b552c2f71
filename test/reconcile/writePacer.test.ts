import { describe, expect, it } from "vitest";
import { instanceRef, parseNicId, type NicRef } from "../../src/core/resourceIds";
import { WritePacer } from "../../src/pacing/writePacer";
import { instanceRefOf, scaleSetRef } from "../support/refs";

/**
 * The write pacer over a clock the test moves: CRP's per-resource and per-subscription buckets, ARM's write bucket, a
 * 429's Retry-After.
 */

const SUB = "00000000-1111-2222-3333-444444444444";
const OTHER_SUB = "99999999-1111-2222-3333-444444444444";
const vmss = (name: string, sub = SUB) =>
  scaleSetRef(`/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`);

function pacerAt(start = 1_000_000) {
  let now = start;
  const pacer = new WritePacer(() => now);
  return { pacer, advance: (ms: number) => (now += ms) };
}

describe("WritePacer", () => {
  it("lets 12 writes to one scale set go at once and holds the 13th until CRP's minute refill", () => {
    const { pacer, advance } = pacerAt();
    const a = vmss("a");
    for (let i = 0; i < 12; i++) {
      expect(pacer.waitMs(a)).toBe(0);
      pacer.take(a);
    }
    expect(pacer.waitMs(a)).toBe(60_000);
    advance(59_999);
    expect(pacer.waitMs(a)).toBe(1);
    advance(1);
    expect(pacer.waitMs(a)).toBe(0);
  });

  it("each scale set and each instance has its own CRP budget", () => {
    const { pacer } = pacerAt();
    const a = vmss("a");
    for (let i = 0; i < 12; i++) pacer.take(a);
    expect(pacer.waitMs(vmss("b"))).toBe(0);
    expect(pacer.waitMs(instanceRef(a, "0"))).toBe(0);
    for (let i = 0; i < 12; i++) pacer.take(instanceRef(a, "0"));
    expect(pacer.waitMs(instanceRef(a, "0"))).toBe(60_000);
    expect(pacer.waitMs(instanceRef(a, "1"))).toBe(0);
  });

  it("every write of a subscription shares ARM's write bucket (180, then one per 100 ms); another subscription does not", () => {
    const { pacer, advance } = pacerAt();
    for (let i = 0; i < 180; i++) pacer.take(instanceRef(vmss(`s${i % 60}`), String(i)));
    expect(pacer.waitMs(vmss("fresh"))).toBe(100);
    expect(pacer.waitMs(vmss("fresh", OTHER_SUB))).toBe(0);
    advance(100);
    expect(pacer.waitMs(vmss("fresh"))).toBe(0);
  });

  it("a 429 empties the target's own bucket until Retry-After, and only that one", () => {
    const { pacer, advance } = pacerAt();
    const a = vmss("a");
    pacer.throttled(a, 30_000);
    expect(pacer.waitMs(a)).toBe(30_000);
    expect(pacer.waitMs(vmss("b"))).toBe(0);
    advance(30_000);
    expect(pacer.waitMs(a)).toBe(0);
    pacer.take(a);
    // The one token Retry-After allows is spent: the next waits for CRP's refill.
    expect(pacer.waitMs(a)).toBeGreaterThan(0);
  });

  it("instance writes of a subscription share CRP's window (UpdateVMScaleSetVM3Min, 240): 235 go, the next when the first age out", () => {
    const { pacer, advance } = pacerAt();
    // 24 scale sets of 10 instances, a write each: no instance's own bucket holds anything back; ARM's refills meanwhile.
    let n = 0;
    for (; n < 300; n++) {
      const target = instanceRef(vmss(`w${Math.floor(n / 10)}`), String(n % 10));
      const wait = pacer.waitMs(target);
      if (wait > 0 && wait > 1_000) break;
      advance(wait);
      pacer.take(target);
    }
    expect(n).toBe(235);
    const next = instanceRef(vmss("late"), "0");
    expect(pacer.waitMs(next)).toBeGreaterThan(2 * 60_000);
    expect(pacer.waitMs(instanceRef(vmss("late", OTHER_SUB), "0"))).toBe(0);
    // Model writes count in a window of their own (CreateVMScaleSet3Min): only ARM's bucket (10 a second) is there.
    expect(pacer.waitMs(vmss("late"))).toBeLessThanOrEqual(100);
    advance(pacer.waitMs(next));
    expect(pacer.waitMs(next)).toBe(0);
  });

  it("learns CRP's count of a window: what other hosts spent is counted as spent now", () => {
    const { pacer } = pacerAt();
    const vm = instanceRef(vmss("a"), "0");
    pacer.learnWindow(vm, "30Min", 3);
    expect(pacer.waitMs(instanceRef(vmss("b"), "0"))).toBeGreaterThan(0);
    expect(pacer.waitMs(vmss("b"))).toBe(0);
  });

  it("NIC writes share NRP's 5-minute budget (1,000; 980 planned); a 429 about one NIC closes that NIC only, NRP's own 429 every NIC", () => {
    const { pacer, advance } = pacerAt();
    const nicOf = (i: number): NicRef => {
      const r = parseNicId(
        `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/n${i}`,
      );
      if (!r.ok) throw new Error(r.reason);
      return r.value;
    };
    let n = 0;
    for (; n < 1_100; n++) {
      const wait = pacer.waitMs(nicOf(n));
      if (wait > 1_000) break;
      advance(wait);
      pacer.take(nicOf(n));
    }
    expect(n).toBe(980);
    advance(6 * 60_000);
    pacer.throttled(
      nicOf(1),
      10_000,
      "429 RetryableError A retryable error occurred. ReferencedResourceNotProvisioned: …",
    );
    expect(pacer.waitMs(nicOf(1))).toBe(10_000);
    expect(pacer.waitMs(nicOf(2))).toBe(0);
    // Model writes never wait for NRP.
    pacer.throttled(
      nicOf(3),
      20_000,
      "429 RetryableError A retryable error occurred. RetryableErrorDueToTooManyCallsToThisOperation: Operation PutNetworkInterfaceOperation exceeded throttling limit of 1000 calls within last 5 minutes.",
    );
    expect(pacer.waitMs(nicOf(4))).toBe(20_000);
    expect(pacer.waitMs(vmss("x"))).toBe(0);
  });

  it("switched off (POOLSYNC_PACING_ENABLED=false), it never holds a write back", () => {
    const pacer = new WritePacer(() => 0, false);
    const a = vmss("a");
    for (let i = 0; i < 50; i++) pacer.take(a);
    pacer.throttled(a, 30_000);
    expect(pacer.waitMs(a)).toBe(0);
  });
});

describe("WritePacer memory", () => {
  const big = vmss("big");
  const vm = (i: number) => instanceRefOf(`${big.id}/virtualMachines/${i}`);

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
    pacer.throttled(big, 600_000);
    for (let i = 0; i < 600; i++) pacer.take(vm(i));
    now += 60_000;
    for (let i = 600; i < 1_200; i++) pacer.take(vm(i));
    expect(pacer.waitMs(big)).toBe(540_000);
  });
});
