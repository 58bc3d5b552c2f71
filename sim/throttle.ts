// CRP's token buckets as its answers name them (Microsoft's throttling docs and the recorded x-ms-ratelimit headers):
// each policy has buckets per resource and per subscription and region, some over a 3- or 30-minute window; a request
// takes a token from every bucket of its policy and is refused with 429 when one is empty, naming every empty one.
// CRP's documentation describes the refill as tokens added every window ("perMinute", the default); "continuous" adds
// them smoothly. ARM's own buckets (reads/writes/deletes per second, per subscription and principal, and 15 times that
// for the whole subscription) sit in front of CRP's.

export type ComputePolicy =
  | "CreateVMScaleSet"
  /** A PUT that creates a scale set: its own, smaller budget, under the same name in headers. */
  | "NewVMScaleSet"
  | "DeleteVMScaleSet"
  | "GetVMScaleSet"
  | "HighCostGetVMScaleSet"
  | "VMScaleSetVMViews"
  | "UpdateVMScaleSetVM"
  | "DeleteVMScaleSetVM"
  | "GetVMScaleSetVM"
  | "GetOperation";

interface BucketLimit {
  /** Appended to the policy's name: `Resource`, `SubscriptionMaximum`, `3Min`, `30Min`. */
  suffix: string;
  /** Enforced and named in a 429's details, but not listed in `x-ms-ratelimit-remaining-resource`. */
  unlisted?: boolean;
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

/**
 * Sizes from CRP's documented tables (VMSS Update 4/12 per resource, 500/1,500 per subscription; Get 12/36, 800/2,400;
 * List and GetInstanceView 360/1,080 per subscription; VM Update 4/12, 500/1,500; VM Get 12/36, 2,000/6,000; VMSS
 * create 125/375 and delete 175/525 per subscription; Get Operation 15/45 per resource, 5,000/15,000 per subscription;
 * HighCostGetVMScaleSet30Min 1,800). Where they are silent (per-VM views, the 3-minute high-cost window) the README
 * lists the value chosen.
 */
export const COMPUTE_LIMITS: Record<ComputePolicy, BucketLimit[]> = {
  // Updates: the recorded PUT's header names CreateVMScaleSet with 1,124 left of the subscription's bucket, so the
  // update budget (1,500) backs it, not the create one.
  CreateVMScaleSet: [perSubscription(1500, 500), perResource(12, 4)],
  NewVMScaleSet: [perSubscription(375, 125), perResource(12, 4)],
  DeleteVMScaleSet: [perSubscription(525, 175), perResource(12, 4)],
  GetVMScaleSet: [perSubscription(2400, 800), perResource(36, 12)],
  // VMSS LIST and VMSS VM LIST share this high-cost bucket, per subscription and region only.
  HighCostGetVMScaleSet: [
    { suffix: "3Min", scope: "subscription", bucket: 1080, refill: 1080, windowMs: 3 * MIN },
    { suffix: "30Min", scope: "subscription", bucket: 1800, refill: 1800, windowMs: 30 * MIN },
  ],
  // One token per VM in a VM LIST answer.
  VMScaleSetVMViews: [{ suffix: "3Min", scope: "subscription", bucket: 6000, refill: 6000, windowMs: 3 * MIN }],
  UpdateVMScaleSetVM: [perSubscription(1500, 500), perResource(12, 4)],
  DeleteVMScaleSetVM: [perSubscription(1500, 500), perResource(12, 4)],
  GetVMScaleSetVM: [perSubscription(6000, 2000), perResource(36, 12)],
  GetOperation: [perSubscription(15000, 5000), perResource(45, 15)],
};

/** The name a policy has in headers and 429 details. */
const HEADER_NAME: Partial<Record<ComputePolicy, string>> = { NewVMScaleSet: "CreateVMScaleSet" };
const headerName = (p: ComputePolicy): string => HEADER_NAME[p] ?? p;

/**
 * How CRP's answers name its buckets. "windows" (default): every public sample names `<Policy>3Min` and
 * `<Policy>30Min` (e.g. `Microsoft.Compute/GetVMScaleSet3Min;197,Microsoft.Compute/GetVMScaleSet30Min;1297`); the
 * windows are per subscription and region. "resourceSubscription": `<Policy>Resource` and
 * `<Policy>SubscriptionMaximum`, as the earlier recordings show.
 */
export type PolicyNaming = "windows" | "resourceSubscription";

/**
 * A policy's buckets when its answers name windows. What backs the windows is not published: the per-subscription
 * bucket becomes the 3-minute window (its size is 3 minutes of its refill in every documented row) and a 30-minute
 * window of ten times that (the same long-run rate, never stricter than the documented one); the per-resource bucket
 * is still enforced and named in a 429's details, but not listed. Policies that have windows keep them.
 */
function windowLimits(limits: BucketLimit[]): BucketLimit[] {
  if (limits.some((l) => l.windowMs !== MIN)) return limits;
  const sub = limits.find((l) => l.scope === "subscription");
  const own = limits.filter((l) => l.scope === "resource").map((l) => ({ ...l, unlisted: true }));
  if (!sub) return own;
  return [
    { suffix: "3Min", scope: "subscription", bucket: sub.bucket, refill: sub.bucket, windowMs: 3 * MIN },
    { suffix: "30Min", scope: "subscription", bucket: sub.bucket * 10, refill: sub.bucket * 10, windowMs: 30 * MIN },
    ...own,
  ];
}

export function limitsOf(policy: ComputePolicy, naming: PolicyNaming): BucketLimit[] {
  return naming === "windows" ? windowLimits(COMPUTE_LIMITS[policy]) : COMPUTE_LIMITS[policy];
}

export type ArmBucketKind = "reads" | "writes" | "deletes";
const ARM_LIMITS: Record<ArmBucketKind, { refillPerSec: number; bucket: number }> = {
  reads: { refillPerSec: 25, bucket: 250 },
  writes: { refillPerSec: 10, bucket: 200 },
  deletes: { refillPerSec: 10, bucket: 200 },
};
/** ARM's cap for a whole subscription, all principals together (request-limits-and-throttling). */
const ARM_GLOBAL_FACTOR = 15;

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
  unlisted?: boolean;
  bucket: TokenBucket;
  allowed: number;
  windowMs: number;
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
      ...(l.unlisted ? { unlisted: true } : {}),
    }));
  }

  /** Takes one token from each CRP bucket of each policy for this resource and subscription+region. */
  admitCompute(policies: ComputePolicy[], resourceKey: string, subscriptionRegionKey: string, now: number): Admission {
    const refs = policies.flatMap((p) => this.refs(p, resourceKey, subscriptionRegionKey, now));
    const adm = this.admit(refs, now, (r) =>
      r.unlisted ? "" : `Microsoft.Compute/${r.policy};${Math.floor(r.bucket.available(now))}`,
    );
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
    for (const r of refs) r.bucket.take(now, 1);
    return {
      ok: true,
      remainingHeader: refs.map(describe).filter(Boolean).join(","),
      refund: () => refs.forEach((r) => r.bucket.give(1)),
    };
  }
}
