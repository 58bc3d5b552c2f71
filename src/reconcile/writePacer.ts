import { emptyUntil, refill, take, waitForToken, WRITE_BUDGETS, type BucketSpec, type BucketState } from "../core/tokenBucket";
import type { InstanceRef, ScaleSetRef } from "../core/resourceIds";

/**
 * Keeps this process's writes inside Compute RP's and ARM's write budgets, so a burst is spread out instead of
 * being answered 429 (which costs a round trip and, at CRP, lengthens the penalty). One process only knows
 * its own writes: a 429 from ARM still wins, and empties the bucket it names until Retry-After.
 */

type Bucket = { spec: BucketSpec; key: string };

export class WritePacer {
  private readonly states = new Map<string, BucketState>();

  constructor(private readonly now: () => number, private readonly enabled = true) {}

  private bucketsFor(target: ScaleSetRef | InstanceRef): Bucket[] {
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

  /** How long until a write to this target fits every budget; 0 = now. Takes nothing. */
  waitMs(target: ScaleSetRef | InstanceRef): number {
    if (!this.enabled) return 0;
    const now = this.now();
    return Math.max(0, ...this.bucketsFor(target).map((b) => waitForToken(b.spec, this.state(b), now)));
  }

  /** Spends one token of each budget the write uses. */
  take(target: ScaleSetRef | InstanceRef): void {
    if (!this.enabled) return;
    const now = this.now();
    for (const b of this.bucketsFor(target)) this.states.set(b.key, take(b.spec, this.state(b), now));
  }

  /** ARM said 429 for this target: its own bucket is empty until Retry-After. */
  throttled(target: ScaleSetRef | InstanceRef, retryAfterMs: number): void {
    const own = this.bucketsFor(target)[0]!;
    this.states.set(own.key, emptyUntil(this.now() + retryAfterMs));
  }

  /**
   * The server's own count of what is left of one budget (it counts every host's writes): plan on no more than that.
   * `budget`: the target's own CRP bucket, CRP's per-subscription one, or ARM's write bucket.
   */
  learnRemaining(target: ScaleSetRef | InstanceRef, budget: "target" | "subscription" | "arm", remaining: number): void {
    const b = this.bucketsFor(target)[budget === "target" ? 0 : budget === "subscription" ? 1 : 2]!;
    this.lower(b.key, b.spec, remaining);
  }

  /** ARM's write bucket of a subscription (the same for every target in it). */
  learnArmWrites(subscriptionId: string, remaining: number): void {
    this.lower(`arm|${subscriptionId.toLowerCase()}`, WRITE_BUDGETS.armWrites, remaining);
  }

  private lower(key: string, spec: BucketSpec, remaining: number): void {
    const now = this.now();
    const s = refill(spec, this.states.get(key) ?? { tokens: spec.capacity, at: now }, now);
    // A bucket closed by a 429 stays closed until its Retry-After. Below zero is kept (down to a whole bucket): every
    // host reads the same figure, and each then waits for the refill its share needs, so together they slow down.
    if (s.at <= now && remaining < s.tokens) this.states.set(key, { tokens: Math.max(-spec.capacity, remaining), at: s.at });
  }

  /** This scale set's own budgets (its model's and its instances'), for the next host that writes it. */
  snapshot(scaleSet: ScaleSetRef): Record<string, BucketState> {
    const out: Record<string, BucketState> = {};
    for (const [key, state] of this.states) {
      if (key === `vmss|${scaleSet.key}` || key.startsWith(`vm|${scaleSet.key}/`)) out[key] = state;
    }
    return out;
  }

  /** Budgets the previous writer of a scale set left (see snapshot): plan on no more than either of us knows is left. */
  restore(snapshot: Record<string, BucketState>): void {
    const now = this.now();
    for (const [key, theirs] of Object.entries(snapshot)) {
      const spec = key.startsWith("vmss|") ? WRITE_BUDGETS.scaleSetUpdate : key.startsWith("vm|") ? WRITE_BUDGETS.instanceUpdate : undefined;
      if (!spec) continue;
      if (theirs.at > now) {
        // Closed by a 429 they got: closed here too, unless ours closes later.
        const ours = this.states.get(key);
        if (!ours || ours.at < theirs.at) this.states.set(key, theirs);
        continue;
      }
      this.lower(key, spec, refill(spec, theirs, now).tokens);
    }
  }
}
