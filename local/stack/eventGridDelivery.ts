/**
 * Event Grid as it really delivers, seeded (learn.microsoft.com, "Event Grid message delivery and retry"): at least
 * once, in no guaranteed order, sometimes twice, and late. A delivery the subscriber does not get (or does not
 * acknowledge) is retried on Event Grid's schedule, about 10 s, 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, then hourly
 * until the event's time to live (24 h by default), each step randomized a little; an acknowledgement lost on the
 * way back makes the same event arrive again at the next step. Pure: one PRNG draws every choice, so a seed replays
 * the same plan, and times are simulated milliseconds (a caller running its simulator faster divides by its scale).
 */

export type Random = () => number;

/** Event Grid's retry steps, simulated ms after the previous attempt; hourly after the last one. */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  10_000,
  30_000,
  60_000,
  5 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
];
const HOURLY_MS = 60 * 60_000;
/** Event Grid's default time to live of an event: past it, an undelivered event is dropped (or dead-lettered). */
export const EVENT_TTL_MS = 24 * 60 * 60_000;

export interface EventGridDeliveryOptions {
  /** Share of attempts the subscriber never gets (Event Grid retries them). Default 0.15. */
  failRate?: number;
  /** Share of received deliveries whose acknowledgement is lost: the event comes again at the next step. Default 0.1. */
  duplicateRate?: number;
  /** The first attempt's delay after the write, simulated ms: uniform in [min, max]. Event Grid does not document its
   *  latency; seconds are usual and minutes are reported. Default 1,000 to 20,000. */
  firstAttemptMs?: { min: number; max: number };
  /** Randomization of each retry step: uniform in [1 - jitter, 1 + jitter] times the step. Default 0.1. */
  jitter?: number;
}

export interface DeliveryPlan {
  /** When the subscriber receives the event, simulated ms after it was published, ascending (may be empty: dropped
   *  after its time to live, which the schedule makes vanishingly rare). */
  receivedAtMs: number[];
  /** Attempts the subscriber did not get. */
  failedAttempts: number;
}

/** Simulated ms before retry `n` (0: the first retry). */
export function retryDelayMs(n: number): number {
  return RETRY_SCHEDULE_MS[n] ?? HOURLY_MS;
}

/** The wait before retry `n`, or undefined once the retries so far would pass the event's time to live. */
export function retryWithinTtlMs(n: number): number | undefined {
  let spent = 0;
  for (let i = 0; i <= n; i++) spent += retryDelayMs(i);
  return spent <= EVENT_TTL_MS ? retryDelayMs(n) : undefined;
}

export function planDelivery(rand: Random, options: EventGridDeliveryOptions = {}): DeliveryPlan {
  const failRate = options.failRate ?? 0.15;
  const duplicateRate = options.duplicateRate ?? 0.1;
  const first = options.firstAttemptMs ?? { min: 1_000, max: 20_000 };
  const jitter = options.jitter ?? 0.1;
  const receivedAtMs: number[] = [];
  let failedAttempts = 0;
  let at = first.min + rand() * (first.max - first.min);
  for (let retry = 0; at <= EVENT_TTL_MS; retry++) {
    if (rand() < failRate) failedAttempts++;
    else {
      receivedAtMs.push(Math.round(at));
      // Acknowledged: done. Its acknowledgement lost: Event Grid sends it again at the next step.
      if (rand() >= duplicateRate) break;
    }
    at += retryDelayMs(retry) * (1 - jitter + 2 * jitter * rand());
  }
  return { receivedAtMs, failedAttempts };
}
