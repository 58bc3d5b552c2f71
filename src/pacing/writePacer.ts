import {
  emptyUntil,
  refill,
  take,
  waitForToken,
  WRITE_BUDGETS,
  type BucketSpec,
  type BucketState,
} from "../core/tokenBucket";
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

  constructor(
    private readonly now: () => number,
    private readonly enabled = true,
  ) {}

  /** Buckets remembered: one per recently written scale set or instance, and per subscription. */
  get size(): number {
    return this.states.size;
  }

  private bucketsFor(target: ScaleSetRef | InstanceRef | NicRef): Bucket[] {
    // Network RP's NIC write limits are not published: ARM's subscription write budget is the one known.
    if (target.kind === "nic")
      return [{ spec: WRITE_BUDGETS.armWrites, key: `arm|${target.subscriptionId.toLowerCase()}` }];
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
    for (const b of this.bucketsFor(target))
      this.states.set(b.key, { ...take(b.spec, this.state(b), now), spec: b.spec });
  }

  /** ARM said 429 for this target: its own bucket is empty until Retry-After. */
  throttled(target: ScaleSetRef | InstanceRef | NicRef, retryAfterMs: number): void {
    const own = this.bucketsFor(target)[0]!;
    this.states.set(own.key, { ...emptyUntil(this.now() + retryAfterMs), spec: own.spec });
  }

  /**
   * The server's own count of what is left of one budget (it counts every host's writes): plan on no more than that.
   * `budget`: the target's own CRP bucket, CRP's per-subscription one, or ARM's write bucket.
   */
  learnRemaining(
    target: ScaleSetRef | InstanceRef,
    budget: "target" | "subscription" | "arm",
    remaining: number,
  ): void {
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
    if (s.at <= now && remaining < s.tokens)
      this.states.set(key, { tokens: Math.max(-spec.capacity, remaining), at: s.at, spec });
  }

  /**
   * What this host knows is left of a subscription's shared bucket (what ARM's answers said, less its writes since),
   * undefined when it has no figure of its own; 0 while a 429 keeps it closed.
   */
  known(subscriptionId: string, kind: "arm" | "vmss-sub" | "vm-sub"): number | undefined {
    const s = this.states.get(`${kind}|${subscriptionId.toLowerCase()}`);
    if (!s) return undefined;
    const now = this.now();
    if (s.at > now) return 0;
    return refill(s.spec, s, now).tokens;
  }

  /** This scale set's own budgets (its model's and its instances'), for the next host that writes it. */
  snapshot(scaleSet: ScaleSetRef): Record<string, BucketState> {
    const out: Record<string, BucketState> = {};
    for (const [key, state] of this.states) {
      if (key === `vmss|${scaleSet.key}` || key.startsWith(`vm|${scaleSet.key}/`))
        out[key] = { tokens: state.tokens, at: state.at };
    }
    return out;
  }

  /**
   * Budgets the previous writer of a scale set left (see snapshot): plan on no more than either of us knows is left.
   */
  restore(snapshot: Record<string, BucketState>): void {
    const now = this.now();
    for (const [key, theirs] of Object.entries(snapshot)) {
      const spec = key.startsWith("vmss|")
        ? WRITE_BUDGETS.scaleSetUpdate
        : key.startsWith("vm|")
          ? WRITE_BUDGETS.instanceUpdate
          : undefined;
      if (!spec) continue;
      if (theirs.at > now) {
        // Closed by a 429 they got: closed here too, unless ours closes later.
        const ours = this.states.get(key);
        if (!ours || ours.at < theirs.at) this.states.set(key, { tokens: theirs.tokens, at: theirs.at, spec });
        continue;
      }
      this.lower(key, spec, refill(spec, theirs, now).tokens);
    }
  }
}
