import { metrics, type Attributes, type ObservableGauge } from "@opentelemetry/api";

/**
 * Gauges: the last value seen, reported at each export for as long as it is fresh. Fed by what the code learns anyway
 * (ARM's remaining-budget headers, the timer's queue and declaration reads), never by a read of its own at export
 * time. A value not seen again within GAUGE_LIFETIME_MS stops being reported and is forgotten: a subscription no
 * longer written, or a timer that stopped, must not keep its last value on the charts for ever.
 */

/** Three timer periods (5 minutes each): long enough that a value fed by every timer run never lapses. */
export const GAUGE_LIFETIME_MS = 15 * 60_000;

type Key = string;
const values = new Map<string, Map<Key, { value: number; attrs: Attributes; at: number }>>();
let registered: unknown;
let now: () => number = Date.now;

/** The clock the gauges age their values by (tests give their own). */
export function setGaugeClock(clock: () => number): void {
  now = clock;
}

const GAUGES: Array<[name: string, description: string, unit: string]> = [
  [
    "poolsync.arm.budget.remaining",
    "What ARM's and CRP's last answers say is left of a bucket (x-ms-ratelimit-remaining-*)",
    "{request}",
  ],
  ["poolsync.declaration.oldest_pending_age", "Age of the oldest declaration not yet applied, failed or refused", "s"],
  ["poolsync.queue.depth", "Approximate messages in the reconcile queue", "{message}"],
  ["poolsync.queue.poison_depth", "Approximate messages in the poison queue", "{message}"],
  ["poolsync.timer.last_success", "When reconcileStale last succeeded (Unix time)", "s"],
];

function ensureRegistered(): void {
  const provider = metrics.getMeterProvider();
  if (registered === provider) return;
  registered = provider;
  const meter = metrics.getMeter("poolsync");
  for (const [name, description, unit] of GAUGES) {
    const gauge: ObservableGauge = meter.createObservableGauge(name, { description, unit });
    gauge.addCallback((result) => {
      const byKey = values.get(name);
      for (const [key, { value, attrs, at }] of byKey ?? []) {
        if (now() - at > GAUGE_LIFETIME_MS) byKey?.delete(key);
        else result.observe(value, attrs);
      }
    });
  }
}

function set(name: string, value: number, attrs: Attributes = {}): void {
  ensureRegistered();
  let byKey = values.get(name);
  if (!byKey) values.set(name, (byKey = new Map()));
  byKey.set(JSON.stringify(attrs), { value, attrs, at: now() });
}

/** `bucket` as ARM or CRP names it: `subscription-reads`, `subscription-writes`, or CRP's policy name. */
export const setBudgetRemaining = (bucket: string, subscriptionId: string, remaining: number) =>
  set("poolsync.arm.budget.remaining", remaining, { bucket, subscription: subscriptionId });
export const setOldestPendingAge = (ageMs: number) =>
  set("poolsync.declaration.oldest_pending_age", Math.max(0, ageMs) / 1000);
export const setQueueDepth = (depth: number) => set("poolsync.queue.depth", depth);
export const setPoisonDepth = (depth: number) => set("poolsync.queue.poison_depth", depth);
export const setTimerLastSuccess = (atMs: number) => set("poolsync.timer.last_success", Math.floor(atMs / 1000));

/** Tests start from nothing. */
export function resetGauges(): void {
  values.clear();
  registered = undefined;
  now = Date.now;
}
