import type { StorageWorkQueue } from "../azure/workQueue";
import type { Clock } from "../core/ports";
import type { EventOutcome } from "../reconcile/resourceEvent";
import { setPoisonDepth, setQueueDepth, setTimerLastSuccess } from "../telemetry/gauges";
import { recordEvent, recordTimerRun, type EventAction } from "../telemetry/metrics";

/** What the composition root records around the event handler and the timer, beside what deep code records itself. */

const EVENT_ACTIONS: Record<EventOutcome, EventAction> = {
  malformed: "malformed",
  ignored: "ignored",
  "out-of-scope": "ignored",
  "own-write": "ignored",
  invalidated: "invalidated",
  unheld: "ignored",
  deleted: "invalidated",
  "invalidated+reconcile": "enqueued",
  "deleted+reconcile": "enqueued",
};

/**
 * `detail` keeps the handler's own word (own-write, deleted+reconcile, …); a debounced wake counts once more as
 * debounced.
 */
export function recordEventOutcome(outcome: EventOutcome): void {
  recordEvent(EVENT_ACTIONS[outcome], outcome);
}

const field = (o: unknown, k: string): unknown =>
  typeof o === "object" && o !== null ? (o as Record<string, unknown>)[k] : undefined;
const text = (v: unknown) => (typeof v === "string" && v.length <= 256 ? v : undefined);

/** Span attributes of a raw ARM event (either schema), read defensively: the handler validates it, not this. */
export function eventAttributes(raw: unknown): Record<string, string> {
  const data = field(raw, "data");
  const out: Record<string, string | undefined> = {
    "azure.arm.correlation_id": text(field(data, "correlationId")),
    "poolsync.client_request_id": text(field(field(data, "httpRequest"), "clientRequestId")),
    "azure.arm.operation_name": text(field(data, "operationName")),
    // Who made the change, as ARM's event names its caller (the same claims the activity log keeps).
    "azure.arm.caller.appid": text(field(field(data, "claims"), "appid")),
    "azure.arm.caller.name": text(field(field(data, "claims"), "name")),
    "poolsync.event.id": text(field(raw, "id")),
    "poolsync.event.type": text(field(raw, "eventType")) ?? text(field(raw, "type")),
    "poolsync.event.subject": text(field(raw, "subject")),
  };
  return Object.fromEntries(Object.entries(out).filter((e): e is [string, string] => e[1] !== undefined));
}

/** A timer run: poolsync.timer.runs by result, the last success, and both queues' depth (two reads per run). */
export async function timedStaleRun<T>(run: () => Promise<T>, queue: StorageWorkQueue, clock: Clock): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (err) {
    recordTimerRun("failure");
    throw err;
  }
  recordTimerRun("success");
  setTimerLastSuccess(clock.now());
  try {
    const [main, poison] = await Promise.all([queue.queue.getProperties(), queue.poison.getProperties()]);
    setQueueDepth(main.approximateMessagesCount ?? 0);
    setPoisonDepth(poison.approximateMessagesCount ?? 0);
  } catch {
    // The depths are a gauge: a failed read keeps the last values, and the run itself succeeded.
  }
  return result;
}
