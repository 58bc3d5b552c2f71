// CRP's token buckets (AZURE-FACTS.md, "Throttling"): one bucket per resource and one per subscription and region for
// each operation kind; a request takes a token from each bucket that applies, and is refused with 429 when one is empty.
// CRP's documentation describes the refill as tokens added every minute ("perMinute", the default); "continuous" adds
// them smoothly. ARM's own per-subscription buckets (reads/writes/deletes per second) sit in front of CRP's.

export type ComputePolicy =
  | "VMScaleSetUpdate"
  | "VMScaleSetGet"
  | "VMScaleSetList"
  | "VMScaleSetVMUpdate"
  | "VMScaleSetVMGet"
  | "VMScaleSetVMList";

interface Limit {
  refillPerMin: number;
  bucket: number;
}

/** Per resource, per subscription. `undefined` = no per-resource bucket (List is subscription-only). */
export const COMPUTE_LIMITS: Record<ComputePolicy, { resource?: Limit; subscription: Limit }> = {
  VMScaleSetUpdate: { resource: { refillPerMin: 4, bucket: 12 }, subscription: { refillPerMin: 500, bucket: 1500 } },
  VMScaleSetGet: { resource: { refillPerMin: 12, bucket: 36 }, subscription: { refillPerMin: 800, bucket: 2400 } },
  VMScaleSetList: { subscription: { refillPerMin: 360, bucket: 1080 } },
  VMScaleSetVMUpdate: { resource: { refillPerMin: 4, bucket: 12 }, subscription: { refillPerMin: 500, bucket: 1500 } },
  VMScaleSetVMGet: { resource: { refillPerMin: 12, bucket: 36 }, subscription: { refillPerMin: 2000, bucket: 6000 } },
  // Not in CRP's table: the VM list is a high-cost read, so it shares the List limits (an assumption, see README).
  VMScaleSetVMList: { subscription: { refillPerMin: 360, bucket: 1080 } },
};

export type ArmBucketKind = "reads" | "writes" | "deletes";
const ARM_LIMITS: Record<ArmBucketKind, { refillPerSec: number; bucket: number }> = {
  reads: { refillPerSec: 25, bucket: 250 },
  writes: { refillPerSec: 10, bucket: 200 },
  deletes: { refillPerSec: 10, bucket: 200 },
};

export type RefillMode = "perMinute" | "continuous";

class TokenBucket {
  private tokens: number;
  private readonly createdAt: number;
  private lastRefill: number;

  constructor(
    readonly capacity: number,
    private readonly refillPerMs: number,
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
      this.tokens = Math.min(this.capacity, this.tokens + (now - this.lastRefill) * this.refillPerMs);
      this.lastRefill = now;
    } else {
      const windows = Math.floor((now - this.createdAt) / 60_000) - Math.floor((this.lastRefill - this.createdAt) / 60_000);
      if (windows > 0) this.tokens = Math.min(this.capacity, this.tokens + windows * this.refillPerMs * 60_000);
      this.lastRefill = now;
    }
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
    if (this.mode === "continuous") return Math.ceil((1 - have) / this.refillPerMs);
    const sinceCreate = now - this.createdAt;
    return 60_000 - (sinceCreate % 60_000);
  }
}

export interface BucketRef {
  policy: string;
  bucket: TokenBucket;
  allowed: number;
}

export interface Admission {
  ok: boolean;
  /** `x-ms-ratelimit-remaining-resource` value, e.g. `Microsoft.Compute/VMScaleSetUpdateResource;11,...`. */
  remainingHeader?: string;
  /** Set when refused: simulated seconds to wait, and the policy that refused. */
  retryAfterSeconds?: number;
  refusedBy?: BucketRef;
  /** Takes the tokens back (a no-op write is charged 0). */
  refund(): void;
}

export class Throttler {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly enforce: boolean,
    private readonly mode: RefillMode,
  ) {}

  private bucket(key: string, capacity: number, refillPerMs: number, now: number, mode = this.mode): TokenBucket {
    let b = this.buckets.get(key);
    if (!b) {
      b = new TokenBucket(capacity, refillPerMs, mode, now);
      this.buckets.set(key, b);
    }
    return b;
  }

  /** Takes one token from each CRP bucket of `policy` for this resource and subscription+region. */
  admitCompute(policy: ComputePolicy, resourceKey: string, subscriptionRegionKey: string, now: number): Admission {
    const limits = COMPUTE_LIMITS[policy];
    const refs: BucketRef[] = [];
    if (limits.resource) {
      const l = limits.resource;
      refs.push({
        policy: `${policy}Resource`,
        bucket: this.bucket(`${policy}|r|${resourceKey}`, l.bucket, l.refillPerMin / 60_000, now),
        allowed: l.bucket,
      });
    }
    const s = limits.subscription;
    refs.push({
      policy: `${policy}Subscription`,
      bucket: this.bucket(`${policy}|s|${subscriptionRegionKey}`, s.bucket, s.refillPerMin / 60_000, now),
      allowed: s.bucket,
    });
    return this.admit(refs, now, (r) => `Microsoft.Compute/${r.policy};${Math.floor(r.bucket.available(now))}`);
  }

  /** ARM's own bucket for the subscription and principal. */
  admitArm(kind: ArmBucketKind, subscriptionPrincipalKey: string, now: number): Admission & { remaining: number } {
    const l = ARM_LIMITS[kind];
    const ref: BucketRef = {
      policy: `Subscription${kind}`,
      bucket: this.bucket(`arm|${kind}|${subscriptionPrincipalKey}`, l.bucket, l.refillPerSec / 1000, now, "continuous"),
      allowed: l.bucket,
    };
    const adm = this.admit([ref], now, () => "");
    return { ...adm, remaining: Math.floor(ref.bucket.available(now)) };
  }

  private admit(refs: BucketRef[], now: number, describe: (r: BucketRef) => string): Admission {
    const empty = this.enforce ? refs.find((r) => r.bucket.available(now) < 1) : undefined;
    if (empty) {
      const waitMs = Math.max(...refs.map((r) => r.bucket.msUntilToken(now)));
      return {
        ok: false,
        remainingHeader: refs.map(describe).join(","),
        retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
        refusedBy: empty,
        refund: () => undefined,
      };
    }
    for (const r of refs) r.bucket.take(now, 1);
    return { ok: true, remainingHeader: refs.map(describe).join(","), refund: () => refs.forEach((r) => r.bucket.give(1)) };
  }
}
