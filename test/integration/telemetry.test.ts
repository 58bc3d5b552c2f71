import { InvocationContext, type PreInvocationContext } from "@azure/functions";
import { context, metrics, SpanKind, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { registerInvocationHook } from "../../src/app/invocationHook";
import { jsonLogger } from "../../src/app/logger";
import { createServices } from "../../src/app/services";
import { dropPool } from "../../sim/wire";
import { eventGridEvent } from "../support/armEventSamples";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { startInMemoryTelemetry, total } from "../support/otel";
import { GAUGE_LIFETIME_MS, resetGauges, setBudgetRemaining, setGaugeClock } from "../../src/telemetry/gauges";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";

/**
 * Every metric and span of issue 27 on the real path: Azurite, the ARM simulator, the real SDKs, with the in-memory
 * exporters standing in for Azure Monitor. Names and attribute values are the ones infra/main.json's alerts query.
 */

let otel: ReturnType<typeof startInMemoryTelemetry>;
afterAll(async () => {
  await otel.stop();
});
beforeAll(() => {
  otel = startInMemoryTelemetry();
});

const spanNamed = (name: string | RegExp) =>
  otel.spans().filter((s) => (typeof name === "string" ? s.name === name : name.test(s.name)));
const traceOf = (s: ReadableSpan) => s.spanContext().traceId;

describe("OpenTelemetry on the real path", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("a declaration: ARM requests, reconcile, declaration outcome and convergence, message age; one trace from the request to each ARM call", async () => {
    h = await startHarness();
    // The declaration's HTTP request: its span's context travels on the queue message (the field this version reads).
    const request = trace.getTracer("test").startSpan("PUT /api/memberships", { kind: SpanKind.SERVER });
    const { traceId, spanId } = request.spanContext();
    await h.send({
      v: 1,
      kind: "declare",
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      state: "present",
      traceparent: `00-${traceId}-${spanId}-01`,
    });
    request.end();
    const [outcome] = await h.drain();
    expect(outcome).toMatchObject({ result: "reconciled", report: { result: "applied" } });

    const requests = await otel.points("poolsync.arm.requests");
    expect(
      total(requests, { operation: "PUT Microsoft.Compute/virtualMachineScaleSets", status: 200, kind: "scaleSet" }),
    ).toBe(1);
    expect(
      total(requests, {
        operation: "PUT Microsoft.Compute/virtualMachineScaleSets/virtualMachines",
        status: 200,
        kind: "instance",
      }),
    ).toBeGreaterThan(0);
    expect(
      total(await otel.points("poolsync.arm.request.duration"), {
        operation: "PUT Microsoft.Compute/virtualMachineScaleSets",
      }),
    ).toBe(1);
    expect(total(await otel.points("poolsync.reconciles"), { result: "applied", trigger: "declare" })).toBe(1);
    expect(total(await otel.points("poolsync.reconcile.duration"), { result: "applied" })).toBe(1);
    expect(total(await otel.points("poolsync.declarations"), { outcome: "applied" })).toBe(1);
    expect(total(await otel.points("poolsync.declaration.convergence"))).toBe(1);
    expect(total(await otel.points("poolsync.queue.message_age"), { kind: "declare" })).toBe(1);
    expect(await otel.points("poolsync.arm.budget.remaining")).not.toEqual([]);
    expect(await otel.units()).toMatchObject({
      "poolsync.arm.request.duration": "s",
      "poolsync.declaration.convergence": "s",
      "poolsync.reconcile.duration": "s",
    });

    // One trace: the request → its message → the reconcile → every ARM, Table and Queue call under it.
    const message = spanNamed("poolsync.message declare")[0]!;
    const reconcile = spanNamed("poolsync.reconcile")[0]!;
    expect(traceOf(message)).toBe(traceId);
    expect(message.parentSpanContext?.spanId).toBe(spanId);
    expect(traceOf(reconcile)).toBe(traceId);
    expect(reconcile.attributes).toMatchObject({ "poolsync.target": DEMO.scaleSetId, "poolsync.result": "applied" });
    const armPut = otel
      .spans()
      .filter(
        (s) =>
          s.name === "HTTP PUT" &&
          traceOf(s) === traceId &&
          String(s.attributes["url.full"] ?? s.attributes["http.url"]).includes("virtualMachineScaleSets"),
      );
    expect(armPut.length).toBeGreaterThan(1); // the model and each instance
    expect(otel.spans().some((s) => s.name.startsWith("TableClient.") && traceOf(s) === traceId)).toBe(true);
  });

  it("412 by resource kind, 429 and concurrent 409 by bucket, and the re-enqueued reconcile carries the trace in its reason", async () => {
    h = await startHarness();
    const c = h.sim.control;
    c.injectFault({ method: "PUT", path: "virtualMachineScaleSets/etag-k8s-mp-0$", status: 412 });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.drain();
    expect(total(await otel.points("poolsync.arm.precondition_failed"), { kind: "scaleSet" })).toBe(1);
    expect(total(await otel.points("poolsync.arm.requests"), { status: 412 })).toBe(1);

    c.injectFault({ method: "PUT", path: "virtualMachineScaleSets/etag-k8s-mp-0$", retryAfterSeconds: 30 });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "absent" });
    const parent = trace.getTracer("test").startSpan("caller");
    await context.with(trace.setSpan(context.active(), parent), () => h!.drain());
    parent.end();
    const throttled = await otel.points("poolsync.arm.throttled");
    expect(total(throttled, { reason: "429", operation: "PUT Microsoft.Compute/virtualMachineScaleSets" })).toBe(1);
    expect(String(throttled.find((p) => p.attributes.reason === "429")?.attributes.bucket)).toMatch(
      /^subscription-writes$|Microsoft\.Compute\//,
    );
    // The requeue: the previous version's schema (no traceparent field) accepts it; the trace rides on the reason.
    const [peeked] = (await h.queue.peekMessages()).peekedMessageItems;
    expect(peeked).toBeUndefined(); // invisible for Retry-After
    const requeue = h.logs.lines.find((l) => l.event === "enqueue" && l.attempt === 1);
    expect(String(requeue?.reason)).toMatch(/ \[traceparent 00-[0-9a-f]{32}-[0-9a-f]{16}-01\]$/);
  });

  it("a concurrent-operation 409 counts as throttling of the resource's operations", async () => {
    h = await startHarness();
    h.sim.control.injectFault({
      method: "PUT",
      path: "virtualMachineScaleSets/etag-k8s-mp-0$",
      status: 409,
      body: {
        error: {
          code: "OperationNotAllowed",
          message: "Another operation on this or dependent resource is in progress.",
        },
      },
    });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.drain();
    expect(
      total(await otel.points("poolsync.arm.throttled"), { reason: "concurrent-409", bucket: "scaleSet-operations" }),
    ).toBe(1);
  });

  it("an ARM event: events by action with its span naming ARM's correlationId and the writer's client request id; the timer's runs, last success, queue depths and oldest pending age", async () => {
    h = await startHarness();
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.drain();
    const event = eventGridEvent({
      resourceUri: DEMO.scaleSetId,
      operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      clientRequestId: "someone-else-1",
    });
    expect(await h.services.handleResourceEvent(event)).toBe("invalidated+reconcile");
    expect(await h.services.handleResourceEvent({ ...event, id: "second" })).toBe("invalidated");
    expect(await h.services.handleResourceEvent({ nonsense: true })).toBe("malformed");
    const events = await otel.points("poolsync.events");
    expect(total(events, { action: "enqueued" })).toBe(1);
    expect(total(events, { action: "invalidated" })).toBe(1);
    expect(total(events, { action: "debounced" })).toBe(1);
    expect(total(events, { action: "malformed" })).toBe(1);
    const span = spanNamed("poolsync.event").find(
      (s) => s.attributes["poolsync.client_request_id"] === "someone-else-1",
    )!;
    expect(span.attributes).toMatchObject({
      "azure.arm.correlation_id": "7ddf2a3b-3f4c-4d44-9e1c-111111111111",
      "poolsync.event.outcome": "invalidated+reconcile",
    });
    // The event's reconcile continues the event's trace: its message's reason carries it.
    const enqueued = h.logs.lines.find((l) => l.event === "enqueue" && String(l.reason).startsWith("event"));
    expect(String(enqueued?.reason)).toContain(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);

    await h.services.reconcileStale();
    expect(total(await otel.points("poolsync.timer.runs"), { result: "success" })).toBe(1);
    const last = await otel.points("poolsync.timer.last_success");
    expect(Number(last[0]?.value)).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(await otel.points("poolsync.queue.depth")).toHaveLength(1);
    expect(await otel.points("poolsync.queue.poison_depth")).toHaveLength(1);
    expect(await otel.points("poolsync.declaration.oldest_pending_age")).toHaveLength(1);
  });

  it("drift an event announced is repaired and counted with source=event", async () => {
    h = await startHarness({ env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "0" } });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.drain();
    // Another writer takes our pool out of the model; its event asks for the reconcile that puts it back.
    h.sim.control.write(DEMO.scaleSetId, dropPool(DEMO.poolId), { clientRequestId: "other-writer-1" });
    // Their write's operation ends before the repair: one still running answers it 409, and the retry that repairs
    // counts as source=retry.
    h.sim.control.settle();
    const event = eventGridEvent({
      resourceUri: DEMO.scaleSetId,
      operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      clientRequestId: "other-writer-1",
    });
    expect(await h.services.handleResourceEvent(event)).toBe("invalidated+reconcile");
    await h.drainUntilEmpty(20_000);
    expect(total(await otel.points("poolsync.drift.repaired"), { source: "event" })).toBe(1);
  });
});

describe("gauges with a lifetime", () => {
  // Azure Monitor's exporter takes gauges as DELTA (selectAggregationTemporality): each export holds only what the
  // callback observed then. The suite's reader is CUMULATIVE, which keeps every point it ever saw, so this test reads
  // through a DELTA reader of its own, as Azure Monitor would, and gives the suite's provider back after.
  afterEach(() => {
    setGaugeClock(Date.now);
    metrics.disable();
    metrics.setGlobalMeterProvider(otel.meterProvider);
    resetGauges();
  });

  it("a value not seen again within GAUGE_LIFETIME_MS stops being exported; a new one is exported again", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.DELTA);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    metrics.disable();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    resetGauges();
    let now = 1_000_000_000;
    setGaugeClock(() => now);
    const exported = async () => {
      exporter.reset();
      await reader.forceFlush();
      return exporter
        .getMetrics()
        .flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics))
        .filter((m) => m.descriptor.name === "poolsync.arm.budget.remaining")
        .flatMap((m) => m.dataPoints.map((p) => p.value));
    };
    setBudgetRemaining("subscription-writes", "00000000-0000-0000-0000-0000000000bb", 1190);
    expect(await exported()).toEqual([1190]);
    now += GAUGE_LIFETIME_MS;
    expect(await exported()).toEqual([1190]);
    now += 1;
    expect(await exported()).toEqual([]);
    setBudgetRemaining("subscription-writes", "00000000-0000-0000-0000-0000000000bb", 1199);
    expect(await exported()).toEqual([1199]);
  });
});

describe("logs tied to the invocation", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("a write's arm.write audit line carries the invocation id of the invocation that made it, through the preInvocation hook", async () => {
    h = await startHarness();
    const lines: Array<Record<string, unknown>> = [];
    const services = createServices(h.config, {
      log: jsonLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>)),
      random: () => 0.5,
    });
    let hook: ((pre: PreInvocationContext) => void) | undefined;
    registerInvocationHook({ hook: { preInvocation: (fn) => (hook = fn) } });
    const invocationContext = new InvocationContext({
      invocationId: "inv-27-audit",
      functionName: "applyBackendPools",
    });
    const pre = {
      invocationContext,
      functionHandler: (body: unknown) =>
        services.handleQueueMessage(body, { id: "m1", dequeueCount: 1, insertionTime: undefined }),
      inputs: [],
      hookData: {},
    } as unknown as PreInvocationContext;
    hook!(pre);
    await (pre.functionHandler as (b: unknown) => Promise<unknown>)({
      v: 1,
      kind: "declare",
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      state: "present",
    });
    const writes = lines.filter((l) => l.event === "arm.write");
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) expect(w.invocationId).toBe("inv-27-audit");
    // Outside an invocation a line has no invocation id.
    expect(lines.filter((l) => l.event === "arm.write" && l.invocationId === undefined)).toEqual([]);
    const invoke = spanNamed("invoke applyBackendPools")[0]!;
    expect(invoke.attributes).toMatchObject({ "faas.invocation_id": "inv-27-audit" });
    await services.coalescer.idle();
  });
});
