/**
 * A token bucket as Compute RP and ARM meter writes: `capacity` tokens, refilled at `refillPerMinute`
 * (continuously here: a conservative reading of CRP's per-minute refill). Pure: the caller passes the time.
 */
export interface BucketSpec {
  capacity: number;
  refillPerMinute: number;
}

export interface BucketState {
  tokens: number;
  at: number;
}

export function refill(spec: BucketSpec, state: BucketState, now: number): BucketState {
  const elapsed = Math.max(0, now - state.at);
  return { tokens: Math.min(spec.capacity, state.tokens + (elapsed * spec.refillPerMinute) / 60_000), at: Math.max(now, state.at) };
}

/** Milliseconds until one token is there (0 = now). */
export function waitForToken(spec: BucketSpec, state: BucketState, now: number): number {
  // A bucket closed until a future time (after a 429) opens then, not before.
  if (state.at > now) return state.at - now + waitForToken(spec, state, state.at);
  const s = refill(spec, state, now);
  if (s.tokens >= 1) return 0;
  // The epsilon keeps float dust (0.666…) from adding a millisecond.
  return Math.ceil(((1 - s.tokens) * 60_000) / spec.refillPerMinute - 1e-6);
}

export function take(spec: BucketSpec, state: BucketState, now: number): BucketState {
  const s = refill(spec, state, now);
  return { tokens: s.tokens - 1, at: s.at };
}

/** After a 429: nothing left until Retry-After has passed. */
export function emptyUntil(until: number): BucketState {
  // One token that only exists from `until` on: the first write goes exactly when Retry-After says.
  return { tokens: 1, at: until };
}

/**
 * The write budgets poolsync paces itself to (AZURE-FACTS.md, "Throttling"): CRP per resource and per
 * subscription, and ARM's per-subscription write bucket (200, refilled at 10/s).
 */
export const WRITE_BUDGETS = {
  scaleSetUpdate: { capacity: 12, refillPerMinute: 4 },
  instanceUpdate: { capacity: 12, refillPerMinute: 4 },
  subscriptionScaleSetUpdates: { capacity: 1_500, refillPerMinute: 500 },
  subscriptionInstanceUpdates: { capacity: 1_500, refillPerMinute: 500 },
  armWrites: { capacity: 200, refillPerMinute: 600 },
} as const satisfies Record<string, BucketSpec>;
