import { metrics, type Attributes, type Counter, type Histogram } from "@opentelemetry/api";

/**
 * Every poolsync instrument, named as infra/main.json's alerts and workbook query them (dotted, with units). Deep code
 * records through the small functions below, never through the OpenTelemetry API: with no MeterProvider registered
 * (tests, or telemetry off) the API's no-op meter makes each of them cost a function call.
 */

const meter = () => metrics.getMeter("poolsync");

interface Instruments {
  armRequests: Counter;
  armDuration: Histogram;
  preconditionFailed: Counter;
  throttled: Counter;
  reconcileDuration: Histogram;
  reconciles: Counter;
  convergence: Histogram;
  declarations: Counter;
  messageAge: Histogram;
  events: Counter;
  driftRepaired: Counter;
  timerRuns: Counter;
}

let made: { provider: unknown; instruments: Instruments } | undefined;

/** Made again when the global provider changes (a test registers its own after this module was loaded). */
function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (made?.provider === provider) return made.instruments;
  const m = meter();
  const instruments: Instruments = {
    armRequests: m.createCounter("poolsync.arm.requests", {
      description: "ARM requests by operation and HTTP status",
      unit: "{request}",
    }),
    armDuration: m.createHistogram("poolsync.arm.request.duration", {
      description: "Duration of one ARM request",
      unit: "s",
    }),
    preconditionFailed: m.createCounter("poolsync.arm.precondition_failed", {
      description: "ARM 412 answers by resource kind",
      unit: "{request}",
    }),
    throttled: m.createCounter("poolsync.arm.throttled", {
      description: "ARM 429 and concurrent-operation 409 answers by bucket",
      unit: "{request}",
    }),
    reconcileDuration: m.createHistogram("poolsync.reconcile.duration", {
      description: "Duration of one reconcile pass",
      unit: "s",
    }),
    reconciles: m.createCounter("poolsync.reconciles", {
      description: "Reconcile passes by result",
      unit: "{reconcile}",
    }),
    convergence: m.createHistogram("poolsync.declaration.convergence", {
      description: "From declaredAt to applied",
      unit: "s",
    }),
    declarations: m.createCounter("poolsync.declarations", {
      description: "Declaration outcomes recorded, by outcome",
      unit: "{declaration}",
    }),
    messageAge: m.createHistogram("poolsync.queue.message_age", {
      description: "Queue message age when its invocation starts",
      unit: "s",
    }),
    events: m.createCounter("poolsync.events", { description: "ARM events by action", unit: "{event}" }),
    driftRepaired: m.createCounter("poolsync.drift.repaired", {
      description: "Reconciles that wrote a change nobody declared away, by source",
      unit: "{reconcile}",
    }),
    timerRuns: m.createCounter("poolsync.timer.runs", { description: "reconcileStale runs by result", unit: "{run}" }),
  };
  made = { provider, instruments };
  return instruments;
}

export interface ArmRequestFacts {
  /** `GET Microsoft.Compute/virtualMachineScaleSets` and the like: the method and the resource type path. */
  operation: string;
  status: number;
  durationMs: number;
  /** scaleSet, instance, vm, nic, operation, list: what the URL names. */
  kind: string;
}

export function recordArmRequest(f: ArmRequestFacts): void {
  const i = instruments();
  // The alerts read `status` as the HTTP status code (infra/main.json: toint(customDimensions.status)).
  const attrs: Attributes = { operation: f.operation, status: f.status, kind: f.kind };
  i.armRequests.add(1, attrs);
  i.armDuration.record(f.durationMs / 1000, attrs);
  if (f.status === 412) i.preconditionFailed.add(1, { kind: f.kind, operation: f.operation });
}

/** `reason` is "429" or "concurrent-409" (the workbook splits by it); `bucket` names what ran out. */
export function recordThrottled(reason: "429" | "concurrent-409", bucket: string, operation: string): void {
  instruments().throttled.add(1, { reason, bucket, operation });
}

export function recordReconcile(result: string, trigger: string, durationMs: number): void {
  const i = instruments();
  i.reconciles.add(1, { result, trigger });
  i.reconcileDuration.record(durationMs / 1000, { result, trigger });
}

/** One declaration's outcome changed; `convergedMs` when it became applied (declaredAt → now). */
export function recordDeclarationOutcome(outcome: string, convergedMs?: number): void {
  const i = instruments();
  i.declarations.add(1, { outcome });
  if (convergedMs !== undefined && convergedMs >= 0) i.convergence.record(convergedMs / 1000);
}

export function recordMessageAge(ageMs: number, kind: string): void {
  if (ageMs >= 0) instruments().messageAge.record(ageMs / 1000, { kind });
}

export type EventAction = "invalidated" | "enqueued" | "ignored" | "malformed" | "debounced";

export function recordEvent(action: EventAction, detail: string): void {
  instruments().events.add(1, { action, detail });
}

export function recordDriftRepaired(source: "event" | "timer"): void {
  instruments().driftRepaired.add(1, { source });
}

/** `result=success` is what the dead-man alert counts. */
export function recordTimerRun(result: "success" | "failure"): void {
  instruments().timerRuns.add(1, { result });
}
