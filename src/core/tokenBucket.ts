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
  return waitForTokens(spec, state, now, 1);
}

/** Milliseconds until `n` tokens are there (0 = now); `n` at most the capacity. */
export function waitForTokens(spec: BucketSpec, state: BucketState, now: number, n: number): number {
  // A bucket closed until a future time (after a 429) opens then, not before.
  if (state.at > now) return state.at - now + waitForTokens(spec, state, state.at, n);
  const s = refill(spec, state, now);
  if (s.tokens >= n) return 0;
  const intervals = Math.ceil((n - s.tokens) / spec.refillAmount);
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
  // ARM's bucket is the subscription's and principal's, so every poolsync host spends it (they share it through the
  // budget row). The safety margin is 20 tokens below the bucket, kept below whatever ARM's answers say is left, not a
  // slower refill: skew and jitter cost a token or two, which the 20 absorb, where a refill at 90 % (9 a second) cost
  // every burst past the first 180 writes a tenth of its time (4 s of the wide burst's 48, bench/RESULTS.md).
  armWrites: { capacity: 180, refillAmount: 1, refillIntervalMs: 100 },
} as const satisfies Record<string, BucketSpec>;

/**
 * ARM's per-subscription read bucket (Azure Resource Manager's documented request limits): 250, refilled at 25 a
 * second. Every GET counts, the polls of long-running operations too, so a burst of writes spends it on polls.
 */
// Reads keep a refill at 90 % as well as the margin: polls spend them in step with writes, and no burst waits on them
// (the wide burst's reads bound it at 16 s, its writes at 35 s).
export const READ_BUDGET: BucketSpec = { capacity: 225, refillAmount: 1, refillIntervalMs: 45 };

/**
 * Tokens of READ_BUDGET an operation poll leaves to every other read: polls wait while the bucket holds no more, so a
 * pass's GET or LIST finds a token at once while the polls of many 30 s operations keep the bucket low. A poll that
 * waits only learns a little later that its operation ended; a pass whose LIST waits holds its target. The slow wide
 * burst's LISTs waited out 30 s request deadlines behind 4,000 to 7,000 polls (bench/RESULTS.md). About two seconds
 * of refill.
 */
export const POLL_RESERVE = 45;
