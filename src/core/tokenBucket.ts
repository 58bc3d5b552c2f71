/**
 * A token bucket as Compute RP and ARM meter writes: `capacity` tokens, `refillAmount` added every
 * `refillIntervalMs`. CRP documents its refill per minute, so poolsync assumes the tokens come as a lump at the end
 * of each minute (the later of the two readings, so the pacer never expects a token before CRP gives one).
 * Pure: the caller passes the time.
 */
export interface BucketSpec {
  capacity: number;
  refillAmount: number;
  refillIntervalMs: number;
}

export interface BucketState {
  tokens: number;
  /** Start of the current refill interval. */
  at: number;
}

export function refill(spec: BucketSpec, state: BucketState, now: number): BucketState {
  if (now <= state.at) return state;
  const intervals = Math.floor((now - state.at) / spec.refillIntervalMs);
  if (intervals === 0) return state;
  return {
    tokens: Math.min(spec.capacity, state.tokens + intervals * spec.refillAmount),
    at: state.at + intervals * spec.refillIntervalMs,
  };
}

/** Milliseconds until one token is there (0 = now). */
export function waitForToken(spec: BucketSpec, state: BucketState, now: number): number {
  // A bucket closed until a future time (after a 429) opens then, not before.
  if (state.at > now) return state.at - now + waitForToken(spec, state, state.at);
  const s = refill(spec, state, now);
  if (s.tokens >= 1) return 0;
  const intervals = Math.ceil((1 - s.tokens) / spec.refillAmount);
  return s.at + intervals * spec.refillIntervalMs - now;
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

const perMinute = (capacity: number, amount: number): BucketSpec => ({
  capacity,
  refillAmount: amount,
  refillIntervalMs: 60_000,
});

/**
 * The write budgets poolsync paces itself to (Microsoft's documented Compute throttling limits): CRP per resource and
 * per subscription, and ARM's per-subscription write bucket (200, refilled at 10 a second).
 */
export const WRITE_BUDGETS = {
  scaleSetUpdate: perMinute(12, 4),
  instanceUpdate: perMinute(12, 4),
  subscriptionScaleSetUpdates: perMinute(1_500, 500),
  subscriptionInstanceUpdates: perMinute(1_500, 500),
  // ARM's bucket is shared with every other client of the subscription, and refills continuously where this
  // one counts whole steps: aim at 90 % of it (180, then 9 a second), so that a small skew never costs a 429.
  armWrites: { capacity: 180, refillAmount: 1, refillIntervalMs: 111 },
} as const satisfies Record<string, BucketSpec>;

/**
 * ARM's per-subscription read bucket (Azure Resource Manager's documented request limits): 250, refilled at 25 a
 * second. Every GET counts, the polls of long-running operations too, so a burst of writes spends it on polls.
 */
export const READ_BUDGET: BucketSpec = { capacity: 225, refillAmount: 1, refillIntervalMs: 45 }; // 90 %, as armWrites
