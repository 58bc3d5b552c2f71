import { context, metrics, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { instrumentAzureSdk } from "../../src/app/telemetry";

/**
 * OpenTelemetry as src/app/telemetry.ts starts it, with in-memory exporters: the global meter, tracer, context manager
 * and propagator, and the Azure SDK instrumentation. Once per test file, and stopped after it: files of the shared
 * worker run one after another in one process, where a global left set would give every later file's work a span
 * (an enqueue's reason would carry a traceparent its test does not expect).
 */
export function startInMemoryTelemetry(
  /** DELTA: a gauge's value is exported only by the collection it was observed in (a lapsed one is seen gone). */
  temporality = AggregationTemporality.CUMULATIVE,
) {
  const metricExporter = new InMemoryMetricExporter(temporality);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  instrumentAzureSdk();

  return {
    meterProvider,
    /** Puts back the no-op globals. */
    async stop(): Promise<void> {
      trace.disable();
      context.disable();
      propagation.disable();
      metrics.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
    spans: (): ReadableSpan[] => spanExporter.getFinishedSpans(),
    /** Every data point of the named metric, from one collection now (cumulative since start, unless DELTA). */
    async points(name: string): Promise<Array<DataPoint<unknown>>> {
      metricExporter.reset();
      await reader.forceFlush();
      const out: Array<DataPoint<unknown>> = [];
      for (const rm of metricExporter.getMetrics())
        for (const sm of rm.scopeMetrics)
          for (const m of sm.metrics)
            if (m.descriptor.name === name) out.push(...(m.dataPoints as Array<DataPoint<unknown>>));
      return out;
    },
    async units(): Promise<Record<string, string>> {
      metricExporter.reset();
      await reader.forceFlush();
      const out: Record<string, string> = {};
      for (const rm of metricExporter.getMetrics())
        for (const sm of rm.scopeMetrics) for (const m of sm.metrics) out[m.descriptor.name] = m.descriptor.unit;
      return out;
    },
  };
}

/** The sum of a counter's points whose attributes include `attrs`. */
export function total(points: Array<DataPoint<unknown>>, attrs: Record<string, unknown> = {}): number {
  return points
    .filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v))
    .reduce((n, p) => n + (typeof p.value === "number" ? p.value : ((p.value as { count?: number }).count ?? 0)), 0);
}
