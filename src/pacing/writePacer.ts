import { CRP_WINDOWS, NRP_WINDOWS, plannable } from "../core/armBudgets";
import { SlidingWindow, type WindowSpec } from "../core/slidingWindow";
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
 * Keeps this process's writes inside Compute RP's, Network RP's and ARM's write budgets, so a burst is spread out
 * instead of being answered 429 (which costs a round trip and, at CRP, lengthens the penalty):
 * - each scale set's and each instance's own CRP bucket (12, then 4 a minute);
 * - CRP's windows per subscription: model writes `CreateVMScaleSet3Min`/`30Min` (240 / 1,200), instance writes
 *   `UpdateVMScaleSetVM3Min`/`30Min` (`PutVM…` in the samples), counted as sliding windows (core/slidingWindow.ts);
 * - NRP's 1,000 writes every 5 minutes per subscription (NIC writes);
 * - ARM's write bucket of the subscription and principal (200, then 10 a second).
 * One process only knows its own writes and what the answers say: a 429 still wins, and closes the bucket it names
 * until Retry-After. The subscription-wide budgets are also reserved in storage across hosts (sharedWriteBudget.ts).
 */

/** The subscription-wide windows a write counts in, by kind (the shared row's names). */
export type WindowKind = "vmss-sub" | "vm-sub" | "nrp";
export const WINDOW_SPECS: Record<WindowKind, Partial<Record<"3Min" | "30Min" | "5Min", WindowSpec>>> = {
  "vmss-sub": CRP_WINDOWS.CreateVMScaleSet,
  "vm-sub": CRP_WINDOWS.UpdateVMScaleSetVM,
  nrp: { "5Min": NRP_WINDOWS.writes },
};

type Bucket = { spec: BucketSpec; key: string };

/** Every this many writes taken, buckets that have refilled to capacity are forgotten. */
const SWEEP_EVERY = 256;

/** A NIC's own writes have no published budget: a 429 about it (its load balancer busy) closes it alone. */
const NIC_CLOSED: BucketSpec = { capacity: Number.MAX_SAFE_INTEGER, refillAmount: 1, refillIntervalMs: 1 };

export class WritePacer {
  private readonly states = new Map<string, BucketState & { spec: BucketSpec }>();
  private readonly windows = new Map<string, SlidingWindow>();
  /** Windows closed by a 429 that named them, until when. */
  private readonly windowClosed = new Map<string, number>();
  private takes = 0;

  constructor(
    private readonly now: () => number,
    private readonly enabled = true,
    /** How late a request may reach the server after it is counted (the read pacer measures round trips). */
    private readonly lateness: () => number = () => 0,
  ) {}

  /** Buckets and windows remembered: one per recently written scale set or instance, and per subscription. */
  get size(): number {
    return this.states.size + this.windows.size;
  }

  private subscriptionOf(target: ScaleSetRef | InstanceRef | NicRef): string {
    return (target.kind === "instance" ? target.scaleSet : target).subscriptionId.toLowerCase();
  }

  private windowKindOf(target: ScaleSetRef | InstanceRef | NicRef): WindowKind {
    return target.kind === "nic" ? "nrp" : target.kind === "instance" ? "vm-sub" : "vmss-sub";
  }

  private bucketsFor(target: ScaleSetRef | InstanceRef | NicRef): Bucket[] {
    const sub = this.subscriptionOf(target);
    const arm = { spec: WRITE_BUDGETS.armWrites, key: `arm|${sub}` };
    if (target.kind === "nic") return [{ spec: NIC_CLOSED, key: `nic|${target.key}` }, arm];
    return target.kind === "scaleSet"
      ? [{ spec: WRITE_BUDGETS.scaleSetUpdate, key: `vmss|${target.key}` }, arm]
      : [{ spec: WRITE_BUDGETS.instanceUpdate, key: `vm|${target.key}` }, arm];
  }

  private window(sub: string, kind: WindowKind, suffix: string, spec: WindowSpec): SlidingWindow {
    const key = `${kind}|${sub}|${suffix}`;
    let w = this.windows.get(key);
    if (!w) {
      w = new SlidingWindow(spec);
      this.windows.set(key, w);
    }
    w.setLateness(this.lateness());
    return w;
  }

  private windowsFor(sub: string, kind: WindowKind): Array<{ suffix: string; w: SlidingWindow }> {
    return Object.entries(WINDOW_SPECS[kind]).map(([suffix, spec]) => ({
      suffix,
      w: this.window(sub, kind, suffix, spec),
    }));
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
      const full = s.spec === NIC_CLOSED || refill(s.spec, s, now).tokens >= s.spec.capacity;
      if (s.at <= now && full) this.states.delete(key);
    }
    for (const [key, until] of this.windowClosed) if (until <= now) this.windowClosed.delete(key);
    for (const [key, w] of this.windows) if (w.empty(now)) this.windows.delete(key);
  }

  /** How long until a write to this target fits every budget; 0 = now. Takes nothing. */
  waitMs(target: ScaleSetRef | InstanceRef | NicRef): number {
    if (!this.enabled) return 0;
    const now = this.now();
    const sub = this.subscriptionOf(target);
    const kind = this.windowKindOf(target);
    const closed = Math.max(0, (this.windowClosed.get(`${kind}|${sub}`) ?? 0) - now);
    return Math.max(
      closed,
      ...this.bucketsFor(target).map((b) => waitForToken(b.spec, this.state(b), now)),
      ...this.windowsFor(sub, kind).map(({ w }) => w.waitMs(now, 1, plannable(w.spec))),
    );
  }

  /** Spends one token of each budget the write uses. */
  take(target: ScaleSetRef | InstanceRef | NicRef): void {
    if (!this.enabled) return;
    const now = this.now();
    if (++this.takes % SWEEP_EVERY === 0) this.sweep(now);
    for (const b of this.bucketsFor(target)) {
      if (b.spec === NIC_CLOSED) continue;
      this.states.set(b.key, { ...take(b.spec, this.state(b), now), spec: b.spec });
    }
    for (const { w } of this.windowsFor(this.subscriptionOf(target), this.windowKindOf(target))) w.add(now);
  }

  /**
   * ARM said 429 for this target: its own bucket is empty until Retry-After. NRP's answer that its subscription's
   * budget is spent (`RetryableErrorDueToTooManyCallsToThisOperation`) closes every NIC write of the subscription.
   */
  throttled(target: ScaleSetRef | InstanceRef | NicRef, retryAfterMs: number, answer?: string): void {
    const until = this.now() + retryAfterMs;
    if (target.kind === "nic" && /TooManyCalls/i.test(answer ?? "")) {
      const key = `nrp|${this.subscriptionOf(target)}`;
      this.windowClosed.set(key, Math.max(this.windowClosed.get(key) ?? 0, until));
      return;
    }
    const own = this.bucketsFor(target)[0]!;
    this.states.set(own.key, { ...emptyUntil(until), spec: own.spec });
  }

  /**
   * The server's own count of what is left of one budget (it counts every host's writes): plan on no more than that.
   * `budget`: the target's own CRP bucket, or ARM's write bucket.
   */
  learnRemaining(target: ScaleSetRef | InstanceRef, budget: "target" | "arm", remaining: number): void {
    const b = this.bucketsFor(target)[budget === "target" ? 0 : 1]!;
    this.lower(b.key, b.spec, remaining);
  }

  /** CRP's count of what is left of a subscription window (`…3Min`, `…30Min`) a write of this target counts in. */
  learnWindow(target: ScaleSetRef | InstanceRef, suffix: "3Min" | "30Min", remaining: number): void {
    const kind = this.windowKindOf(target);
    const spec = WINDOW_SPECS[kind][suffix];
    if (spec) this.window(this.subscriptionOf(target), kind, suffix, spec).learnRemaining(this.now(), remaining);
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
   * What this host knows is left of ARM's write bucket of a subscription (what ARM's answers said, less its writes
   * since), undefined when it has no figure of its own; 0 while a 429 keeps it closed.
   */
  known(subscriptionId: string): number | undefined {
    const s = this.states.get(`arm|${subscriptionId.toLowerCase()}`);
    if (!s) return undefined;
    const now = this.now();
    if (s.at > now) return 0;
    return refill(s.spec, s, now).tokens;
  }

  /** What this host counts in a subscription window: its own writes and what CRP's answers said others spent. */
  counted(subscriptionId: string, kind: WindowKind, suffix: string): number | undefined {
    const w = this.windows.get(`${kind}|${subscriptionId.toLowerCase()}|${suffix}`);
    return w?.count(this.now());
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
