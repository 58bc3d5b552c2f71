// CRP's token buckets as its answers name them (Microsoft's throttling docs and the recorded x-ms-ratelimit headers):
// each policy has buckets per resource and per subscription and region, some over a 3- or 30-minute window; a request
// takes a token from every bucket of its policy and is refused with 429 when one is empty, naming every empty one.
// CRP's documentation describes the refill as tokens added every window ("perMinute", the default); "continuous" adds
// them smoothly. ARM's own buckets (reads/writes/deletes per second, per subscription and principal, and 15 times that
// for the whole subscription) sit in front of CRP's and NRP's; NRP's are per subscription and region, per 5 minutes.

export type ComputePolicy =
  | "CreateVMScaleSet"
  /** A PUT that creates a scale set: its own budget, under the same name in headers. */
  | "NewVMScaleSet"
  | "DeleteVMScaleSet"
  | "GetVMScaleSet"
  | "HighCostGetVMScaleSet"
  | "VMScaleSetVMViews"
  | "UpdateVMScaleSetVM"
  | "DeleteVMScaleSetVM"
  | "GetVMScaleSetVM"
  /** GET of a top-level VM (a Flexible scale set's, or standalone). */
  | "GetVM"
  | "GetOperation";

interface BucketLimit {
  /** Appended to the policy's name: `Resource`, `SubscriptionMaximum`, `3Min`, `30Min`. */
  suffix: string;
  scope: "resource" | "subscription";
  bucket: number;
  /** Tokens added per window. */
  refill: number;
  windowMs: number;
}

const MIN = 60_000;
const perResource = (bucket: number, refillPerMin: number): BucketLimit => ({
  suffix: "Resource",
  scope: "resource",
  bucket,
  refill: refillPerMin,
  windowMs: MIN,
});
const perSubscription = (bucket: number, refillPerMin: number): BucketLimit => ({
  suffix: "SubscriptionMaximum",
  scope: "subscription",
  bucket,
  refill: refillPerMin,
  windowMs: MIN,
});
/** A published window per subscription and region: `size` requests, all back when the window turns. */
const window = (minutes: 3 | 30, size: number): BucketLimit => ({
  suffix: `${minutes}Min`,
  scope: "subscription",
  bucket: size,
  refill: size,
  windowMs: minutes * MIN,
});

/**
 * CRP's documented per-minute table (MicrosoftDocs compute-throttling-limits.md, 2024-05): VMSS Update 4/12 per
 * resource, 500/1,500 per subscription; Get 12/36, 800/2,400; List and GetInstanceView 360/1,080 per subscription; VM
 * Update 4/12, 500/1,500; VM Get 12/36, 2,000/6,000; VMSS create 125/375 and delete 175/525 per subscription; Get
 * Operation 15/45 per resource, 5,000/15,000 per subscription. The earlier recordings name these buckets
 * `<Policy>Resource` and `<Policy>SubscriptionMaximum` (`rateLimitPolicyNames: "resourceSubscription"`).
 */
export const DOCUMENTED_LIMITS: Record<ComputePolicy, BucketLimit[]> = {
  // Updates: the recorded PUT's header names CreateVMScaleSet with 1,124 left of the subscription's bucket, so the
  // update budget (1,500) backs it, not the create one.
  CreateVMScaleSet: [perSubscription(1500, 500), perResource(12, 4)],
  NewVMScaleSet: [perSubscription(375, 125), perResource(12, 4)],
  DeleteVMScaleSet: [perSubscription(525, 175), perResource(12, 4)],
  GetVMScaleSet: [perSubscription(2400, 800), perResource(36, 12)],
  // VMSS LIST, VMSS VM LIST and VM LIST share this high-cost bucket, per subscription and region only.
  HighCostGetVMScaleSet: [window(3, 1080), window(30, 1800)],
  // One token per VM in a VMSS VM LIST answer.
  VMScaleSetVMViews: [window(3, 6000)],
  UpdateVMScaleSetVM: [perSubscription(1500, 500), perResource(12, 4)],
  DeleteVMScaleSetVM: [perSubscription(1500, 500), perResource(12, 4)],
  GetVMScaleSetVM: [perSubscription(6000, 2000), perResource(36, 12)],
  // The reading of the VM table: 15 a minute (burst 45) per VM, 5,000 (15,000) per subscription.
  GetVM: [perSubscription(15000, 5000), perResource(45, 15)],
  GetOperation: [perSubscription(15000, 5000), perResource(45, 15)],
};

/**
 * The buckets as every public sample of CRP's answers names them, at the sizes the samples show (sim/README.md lists
 * each with its source). Reads: `GetVMScaleSet3Min;197,GetVMScaleSet30Min;1297` (2023) is three requests into windows
 * of 200 and 1,300. Writes: `PutVM3Min;237,PutVM30Min;1188` (azure-cli issue 15765): windows of 240 and 1,200.
 * High-cost reads: `HighCostGetVMScaleSet30Min` allowed 1,800 (AKS troubleshooting, 2026), 3Min 180 (aks-engine issue
 * 2295, 2019; giantswarm/azure-operator PR 741 counts on 190). A policy no sample names takes the windows of the
 * sampled policy of its kind; the windows are per subscription and region (no sample says more). The per-resource
 * bucket of the documented table stays, listed as `<Policy>Resource`. VM GETs and operation polls keep the documented
 * per-minute buckets: the recorded poll names them `GetOperationResource` / `GetOperationSubscriptionMaximum`.
 */
const READ_WINDOWS = [window(3, 200), window(30, 1300)];
const WRITE_WINDOWS = [window(3, 240), window(30, 1200)];
export const PUBLISHED_LIMITS: Record<ComputePolicy, BucketLimit[]> = {
  CreateVMScaleSet: [...WRITE_WINDOWS, perResource(12, 4)],
  NewVMScaleSet: [...WRITE_WINDOWS, perResource(12, 4)],
  DeleteVMScaleSet: [...WRITE_WINDOWS, perResource(12, 4)],
  GetVMScaleSet: [...READ_WINDOWS, perResource(36, 12)],
  HighCostGetVMScaleSet: [window(3, 180), window(30, 1800)],
  VMScaleSetVMViews: [window(3, 6000)],
  UpdateVMScaleSetVM: [...WRITE_WINDOWS, perResource(12, 4)],
  DeleteVMScaleSetVM: [...WRITE_WINDOWS, perResource(12, 4)],
  GetVMScaleSetVM: [...READ_WINDOWS, perResource(36, 12)],
  GetVM: DOCUMENTED_LIMITS.GetVM,
  GetOperation: DOCUMENTED_LIMITS.GetOperation,
};

/** The name a policy has in headers and 429 details. */
const HEADER_NAME: Partial<Record<ComputePolicy, string>> = { NewVMScaleSet: "CreateVMScaleSet" };
const headerName = (p: ComputePolicy): string => HEADER_NAME[p] ?? p;

/**
 * How CRP's answers name and size its buckets. "windows" (default): as every public sample, `<Policy>3Min` and
 * `<Policy>30Min` at the sizes the samples show, beside `<Policy>Resource`. "resourceSubscription": the documented
 * per-minute table, named `<Policy>Resource` and `<Policy>SubscriptionMaximum` as the earlier recordings show.
 * "roomyWindows": the window names at the sizes this simulator used before issue 42 (the per-minute subscription
 * bucket as the 3-minute window, ten times it as the 30-minute one): about ten times kinder than every sample, kept
 * for measurements that must compare with earlier ones.
 */
export type PolicyNaming = "windows" | "resourceSubscription" | "roomyWindows";

/** The pre-issue-42 windows: the per-minute subscription bucket for 3 minutes, ten times it for 30. */
function roomyWindows(limits: BucketLimit[]): BucketLimit[] {
  if (limits.some((l) => l.windowMs !== MIN)) return limits;
  const sub = limits.find((l) => l.scope === "subscription");
  const own = limits.filter((l) => l.scope === "resource");
  if (!sub) return own;
  return [window(3, sub.bucket), window(30, sub.bucket * 10), ...own];
}

export function limitsOf(policy: ComputePolicy, naming: PolicyNaming): BucketLimit[] {
  if (naming === "resourceSubscription") return DOCUMENTED_LIMITS[policy];
  if (naming === "roomyWindows") return roomyWindows(DOCUMENTED_LIMITS[policy]);
  return PUBLISHED_LIMITS[policy];
}

export type ArmBucketKind = "reads" | "writes" | "deletes";
const ARM_LIMITS: Record<ArmBucketKind, { refillPerSec: number; bucket: number }> = {
  reads: { refillPerSec: 25, bucket: 250 },
  writes: { refillPerSec: 10, bucket: 200 },
  deletes: { refillPerSec: 10, bucket: 200 },
};
/** ARM's cap for a whole subscription, all principals together (request-limits-and-throttling). */
const ARM_GLOBAL_FACTOR = 15;

/**
 * Network RP's limits, per subscription and region: 1,000 writes and deletes and 10,000 reads every 5 minutes
 * (learn.microsoft.com request-limits-and-throttling, "Network throttling"). NRP publishes no per-resource budget and
 * no remaining-count header.
 */
export type NetworkBucketKind = "reads" | "writes";
export const NRP_LIMITS: Record<NetworkBucketKind, number> = { reads: 10_000, writes: 1_000 };
const NRP_WINDOW_MS = 5 * MIN;

/** CRP's Retry-After never says more than this (1,200 s is seen when a 30-minute bucket is empty). */
const MAX_RETRY_AFTER_S = 1200;

export type RefillMode = "perMinute" | "continuous";

class TokenBucket {
  private tokens: number;
  private readonly createdAt: number;
  private lastRefill: number;

  constructor(
    readonly capacity: number,
    private readonly refill: number,
    private readonly windowMs: number,
    private readonly mode: RefillMode,
    now: number,
  ) {
    this.tokens = capacity;
    this.createdAt = now;
    this.lastRefill = now;
  }

  /** Tokens now, after the refills that have fallen due. */
  available(now: number): number {
    if (this.mode === "continuous") {
      this.tokens = Math.min(this.capacity, this.tokens + ((now - this.lastRefill) * this.refill) / this.windowMs);
    } else {
      const windows =
        Math.floor((now - this.createdAt) / this.windowMs) -
        Math.floor((this.lastRefill - this.createdAt) / this.windowMs);
      if (windows > 0) this.tokens = Math.min(this.capacity, this.tokens + windows * this.refill);
    }
    this.lastRefill = now;
    return this.tokens;
  }

  take(now: number, n: number): void {
    this.available(now);
    this.tokens = Math.max(0, this.tokens - n);
  }

  give(n: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + n);
  }

  /** Simulated ms until one whole token is there. */
  msUntilToken(now: number): number {
    const have = this.available(now);
    if (have >= 1) return 0;
    if (this.mode === "continuous") return Math.ceil(((1 - have) * this.windowMs) / this.refill);
    return this.windowMs - ((now - this.createdAt) % this.windowMs);
  }
}

export interface BucketRef {
  policy: string;
  bucket: TokenBucket;
  allowed: number;
  windowMs: number;
  /** Whose bucket it is: one resource's, or a whole subscription's (and region's). */
  scope?: "resource" | "subscription";
}

/** The fewest tokens a subscription's bucket of one policy held after an admitted request, over every subscription. */
export interface BucketLow {
  allowed: number;
  lowest: number;
}

export interface Admission {
  ok: boolean;
  /** `x-ms-ratelimit-remaining-resource` value, e.g. `Microsoft.Compute/GetVMScaleSetSubscriptionMaximum;2399,...`. */
  remainingHeader?: string;
  /** Set when refused: simulated seconds to wait, and every policy whose bucket is empty. */
  retryAfterSeconds?: number;
  refusedBy?: BucketRef[];
  /** Takes the tokens back (a no-op write is charged 0). */
  refund(): void;
  /** Takes `n` more tokens from the buckets of `policy` (never refuses: the answer is already given). */
  charge(policy: ComputePolicy, n: number): void;
}

export class Throttler {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly lows = new Map<string, BucketLow>();

  constructor(
    private readonly enforce: boolean,
    private readonly mode: RefillMode,
    private readonly naming: PolicyNaming = "windows",
  ) {}

  private bucket(
    key: string,
    capacity: number,
    refill: number,
    windowMs: number,
    now: number,
    mode = this.mode,
  ): TokenBucket {
    let b = this.buckets.get(key);
    if (!b) {
      b = new TokenBucket(capacity, refill, windowMs, mode, now);
      this.buckets.set(key, b);
    }
    return b;
  }

  private refs(policy: ComputePolicy, resourceKey: string, subscriptionRegionKey: string, now: number): BucketRef[] {
    return limitsOf(policy, this.naming).map((l) => ({
      policy: `${headerName(policy)}${l.suffix}`,
      bucket: this.bucket(
        `${policy}${l.suffix}|${l.scope === "resource" ? resourceKey : subscriptionRegionKey}`,
        l.bucket,
        l.refill,
        l.windowMs,
        now,
      ),
      allowed: l.bucket,
      windowMs: l.windowMs,
      scope: l.scope,
    }));
  }

  /**
   * Per CRP policy and window (`HighCostGetVMScaleSet3Min`), the fewest tokens any subscription's bucket held after
   * an admitted request since the last reset: how close a workload came to a 429 (the per-resource buckets are left out).
   */
  lowestRemaining(): Record<string, BucketLow> {
    return Object.fromEntries([...this.lows].sort(([a], [b]) => a.localeCompare(b)));
  }

  resetLows(): void {
    this.lows.clear();
  }

  /** Takes one token from each CRP bucket of each policy for this resource and subscription+region. */
  admitCompute(policies: ComputePolicy[], resourceKey: string, subscriptionRegionKey: string, now: number): Admission {
    const refs = policies.flatMap((p) => this.refs(p, resourceKey, subscriptionRegionKey, now));
    const adm = this.admit(refs, now, (r) => `Microsoft.Compute/${r.policy};${Math.floor(r.bucket.available(now))}`);
    return {
      ...adm,
      charge: (policy, n) => {
        if (n > 0) for (const r of this.refs(policy, resourceKey, subscriptionRegionKey, now)) r.bucket.take(now, n);
      },
    };
  }

  /** ARM's own buckets: the principal's within the subscription, and the subscription's global cap. */
  admitArm(
    kind: ArmBucketKind,
    subscriptionId: string,
    principal: string,
    now: number,
  ): Omit<Admission, "charge"> & { remaining: number; globalRemaining: number } {
    const l = ARM_LIMITS[kind];
    const sub = subscriptionId.toLowerCase();
    const own: BucketRef = {
      policy: `Subscription${kind}`,
      bucket: this.bucket(`arm|${kind}|${sub}|${principal}`, l.bucket, l.refillPerSec, 1000, now, "continuous"),
      allowed: l.bucket,
      windowMs: 1000,
    };
    const global: BucketRef = {
      policy: `Subscription${kind}Global`,
      bucket: this.bucket(
        `arm|${kind}|${sub}|*`,
        l.bucket * ARM_GLOBAL_FACTOR,
        l.refillPerSec * ARM_GLOBAL_FACTOR,
        1000,
        now,
        "continuous",
      ),
      allowed: l.bucket * ARM_GLOBAL_FACTOR,
      windowMs: 1000,
    };
    const adm = this.admit([own, global], now, () => "");
    return {
      ...adm,
      remaining: Math.floor(own.bucket.available(now)),
      globalRemaining: Math.floor(global.bucket.available(now)),
    };
  }

  /** NRP's buckets for this subscription and region: one token, or the wait until the window gives one back. */
  admitNetwork(
    kind: NetworkBucketKind,
    subscriptionRegionKey: string,
    now: number,
  ): Omit<Admission, "charge" | "remainingHeader"> & { allowed: number } {
    const size = NRP_LIMITS[kind];
    const ref: BucketRef = {
      policy: `Network${kind}`,
      bucket: this.bucket(`nrp|${kind}|${subscriptionRegionKey}`, size, size, NRP_WINDOW_MS, now),
      allowed: size,
      windowMs: NRP_WINDOW_MS,
    };
    return { ...this.admit([ref], now, () => ""), allowed: size };
  }

  private admit(refs: BucketRef[], now: number, describe: (r: BucketRef) => string): Omit<Admission, "charge"> {
    const empty = this.enforce ? refs.filter((r) => r.bucket.available(now) < 1) : [];
    if (empty.length > 0) {
      // As CRP computes it: the wait until every empty bucket has a token again.
      const waitMs = Math.max(...empty.map((r) => r.bucket.msUntilToken(now)));
      return {
        ok: false,
        remainingHeader: refs.map(describe).filter(Boolean).join(","),
        retryAfterSeconds: Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(waitMs / 1000))),
        refusedBy: empty,
        refund: () => undefined,
      };
    }
    for (const r of refs) {
      r.bucket.take(now, 1);
      if (r.scope === "subscription") {
        const left = r.bucket.available(now);
        const low = this.lows.get(r.policy);
        if (!low || left < low.lowest) this.lows.set(r.policy, { allowed: r.allowed, lowest: Math.floor(left) });
      }
    }
    return {
      ok: true,
      remainingHeader: refs.map(describe).filter(Boolean).join(","),
      refund: () => refs.forEach((r) => r.bucket.give(1)),
    };
  }
}
