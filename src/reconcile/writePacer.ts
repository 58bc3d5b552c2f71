import { emptyUntil, refill, take, waitForToken, WRITE_BUDGETS, type BucketSpec, type BucketState } from "../core/tokenBucket";
import type { InstanceRef, NicRef, ScaleSetRef } from "../core/resourceIds";

/**
 * Keeps this process's writes inside Compute RP's and ARM's write budgets, so a burst is spread out instead of
 * being answered 429 (which costs a round trip and, at CRP, lengthens the penalty). One process only knows
 * its own writes: a 429 from ARM still wins, and empties the bucket it names until Retry-After.
 */

type Bucket = { spec: BucketSpec; key: string };

/** Every this many writes taken, buckets that have refilled to capacity are forgotten. */
const SWEEP_EVERY = 256;

export class WritePacer {
  private readonly states = new Map<string, BucketState & { spec: BucketSpec }>();
  private takes = 0;

  constructor(private readonly now: () => number, private readonly enabled = true) {}

  /** Buckets remembered: one per recently written scale set or instance, and per subscription. */
  get size(): number {
    return this.states.size;
  }

  private bucketsFor(target: ScaleSetRef | InstanceRef | NicRef): Bucket[] {
    // Network RP's NIC write limits are not published: ARM's subscription write budget is the one known.
    if (target.kind === "nic") return [{ spec: WRITE_BUDGETS.armWrites, key: `arm|${target.subscriptionId.toLowerCase()}` }];
    const sub = (target.kind === "instance" ? target.scaleSet : target).subscriptionId.toLowerCase();
    return target.kind === "scaleSet"
      ? [
          { spec: WRITE_BUDGETS.scaleSetUpdate, key: `vmss|${target.key}` },
          { spec: WRITE_BUDGETS.subscriptionScaleSetUpdates, key: `vmss-sub|${sub}` },
          { spec: WRITE_BUDGETS.armWrites, key: `arm|${sub}` },
        ]
      : [
          { spec: WRITE_BUDGETS.instanceUpdate, key: `vm|${target.key}` },
          { spec: WRITE_BUDGETS.subscriptionInstanceUpdates, key: `vm-sub|${sub}` },
          { spec: WRITE_BUDGETS.armWrites, key: `arm|${sub}` },
        ];
  }

  private state(b: Bucket): BucketState {
    return this.states.get(b.key) ?? { tokens: b.spec.capacity, at: this.now() };
  }

  /**
   * A bucket back at capacity is what an unknown one is: forgetting it changes no answer. Without this the map grew
   * by one entry per instance ever written, for the life of the process.
   */
  private sweep(now: number): void {
    for (const [key, s] of this.states) {
      if (s.at <= now && refill(s.spec, s, now).tokens >= s.spec.capacity) this.states.delete(key);
    }
  }

  /** How long until a write to this target fits every budget; 0 = now. Takes nothing. */
  waitMs(target: ScaleSetRef | InstanceRef | NicRef): number {
    if (!this.enabled) return 0;
    const now = this.now();
    return Math.max(0, ...this.bucketsFor(target).map((b) => waitForToken(b.spec, this.state(b), now)));
  }

  /** Spends one token of each budget the write uses. */
  take(target: ScaleSetRef | InstanceRef | NicRef): void {
    if (!this.enabled) return;
    const now = this.now();
    if (++this.takes % SWEEP_EVERY === 0) this.sweep(now);
    for (const b of this.bucketsFor(target)) this.states.set(b.key, { ...take(b.spec, this.state(b), now), spec: b.spec });
  }

  /** ARM said 429 for this target: its own bucket is empty until Retry-After. */
  throttled(target: ScaleSetRef | InstanceRef | NicRef, retryAfterMs: number): void {
    const own = this.bucketsFor(target)[0]!;
    this.states.set(own.key, { ...emptyUntil(this.now() + retryAfterMs), spec: own.spec });
  }
}
