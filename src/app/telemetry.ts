import type { TokenCredential } from "@azure/core-auth";
import {
  authenticationClientId,
  telemetryOff,
  telemetrySwitches,
  type ExporterName,
  type TelemetrySwitches,
} from "./telemetrySwitches";

/**
 * OpenTelemetry for the app, started once per process by src/app/telemetryStart.ts before the first invocation.
 * Nothing of the SDK, the exporter or the instrumentations is loaded unless a switch asks for it
 * (APPLICATIONINSIGHTS_CONNECTION_STRING or an OTEL_*_EXPORTER): a cold start without telemetry pays for none of it.
 *
 * In Azure the exporter authenticates with the app's managed identity (the template turns App Insights local auth
 * off and grants Monitoring Metrics Publisher to the storage identity, the one
 * APPLICATIONINSIGHTS_AUTHENTICATION_STRING names). Traces: the Azure SDK instrumentation makes every ARM, Table and
 * Queue call a dependency span; the Functions instrumentation puts each handler in the host's trace context and sends
 * the worker's logs.
 */

export interface Telemetry {
  switches: TelemetrySwitches;
  forceFlush(): Promise<void>;
  /** Spans and logs only: what the batch processors hold (metrics keep their interval). */
  flushSpansAndLogs(): Promise<void>;
  shutdown(): Promise<void>;
}

/* eslint-disable @typescript-eslint/no-require-imports -- loaded only when asked for (cold start) */

function credentialFor(env: NodeJS.ProcessEnv): TokenCredential | undefined {
  // The exporter sends with a token only where local auth is off: the template says so with the authentication string.
  if (!env.APPLICATIONINSIGHTS_AUTHENTICATION_STRING) return undefined;
  const clientId = authenticationClientId(env) ?? env.AzureWebJobsStorage__clientId?.trim();
  const { ManagedIdentityCredential } = require("@azure/identity") as typeof import("@azure/identity");
  return clientId ? new ManagedIdentityCredential({ clientId }) : new ManagedIdentityCredential();
}

function resourceOf(env: NodeJS.ProcessEnv) {
  const { detectResources, envDetector, resourceFromAttributes } =
    require("@opentelemetry/resources") as typeof import("@opentelemetry/resources");
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win (envDetector); the site name is the default in Azure.
  const base = resourceFromAttributes({ "service.name": env.WEBSITE_SITE_NAME?.trim() || "poolsync" });
  return base.merge(detectResources({ detectors: [envDetector] }));
}

function startMetrics(
  s: TelemetrySwitches,
  resource: ReturnType<typeof resourceOf>,
  credential: TokenCredential | undefined,
) {
  const sdk = require("@opentelemetry/sdk-metrics") as typeof import("@opentelemetry/sdk-metrics");
  const { metrics } = require("@opentelemetry/api") as typeof import("@opentelemetry/api");
  const exporterOf = (name: ExporterName) => {
    if (name === "console") return new sdk.ConsoleMetricExporter();
    const { AzureMonitorMetricExporter } =
      require("@azure/monitor-opentelemetry-exporter") as typeof import("@azure/monitor-opentelemetry-exporter");
    return new AzureMonitorMetricExporter({
      connectionString: s.connectionString as string,
      ...(credential ? { credential } : {}),
    });
  };
  const readers = s.metrics.map(
    (name) =>
      new sdk.PeriodicExportingMetricReader({
        exporter: exporterOf(name),
        exportIntervalMillis: s.metricIntervalMs,
        exportTimeoutMillis: Math.min(30_000, s.metricIntervalMs),
      }),
  );
  const provider = new sdk.MeterProvider({ resource, readers });
  metrics.setGlobalMeterProvider(provider);
  return provider;
}

function startTraces(
  s: TelemetrySwitches,
  resource: ReturnType<typeof resourceOf>,
  credential: TokenCredential | undefined,
) {
  const base = require("@opentelemetry/sdk-trace-base") as typeof import("@opentelemetry/sdk-trace-base");
  const api = require("@opentelemetry/api") as typeof import("@opentelemetry/api");
  const { W3CTraceContextPropagator } = require("@opentelemetry/core") as typeof import("@opentelemetry/core");
  const { AsyncLocalStorageContextManager } =
    require("@opentelemetry/context-async-hooks") as typeof import("@opentelemetry/context-async-hooks");
  const spanProcessors = s.traces.map((name) => {
    if (name === "console") return new base.SimpleSpanProcessor(new base.ConsoleSpanExporter());
    const { AzureMonitorTraceExporter } =
      require("@azure/monitor-opentelemetry-exporter") as typeof import("@azure/monitor-opentelemetry-exporter");
    return new base.BatchSpanProcessor(
      new AzureMonitorTraceExporter({
        connectionString: s.connectionString as string,
        ...(credential ? { credential } : {}),
      }),
    );
  });
  // The sampler follows OTEL_TRACES_SAMPLER / _ARG (the SDK reads them); parent-based always-on by default.
  const provider = new base.BasicTracerProvider({ resource, spanProcessors });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  instrumentAzureSdk();
  return provider;
}

/**
 * Every Azure SDK client (ARM, Tables, Queues) traces through @azure/core-tracing's instrumenter. The instrumentation
 * patches that module when it is required; the module is already loaded (and, in the package's bundle, never
 * required by name), so the patch is applied to it directly: one copy of core-tracing serves every SDK here.
 */
export function instrumentAzureSdk(): void {
  const { AzureSdkInstrumentation } =
    require("@azure/opentelemetry-instrumentation-azure-sdk") as typeof import("@azure/opentelemetry-instrumentation-azure-sdk");
  const instrumentation = new AzureSdkInstrumentation({ enabled: false });
  const coreTracing = require("@azure/core-tracing") as unknown;
  const definitions = instrumentation.getModuleDefinitions();
  for (const d of definitions) d.patch?.(coreTracing);
}

function startLogs(
  s: TelemetrySwitches,
  resource: ReturnType<typeof resourceOf>,
  credential: TokenCredential | undefined,
) {
  const sdk = require("@opentelemetry/sdk-logs") as typeof import("@opentelemetry/sdk-logs");
  const { logs } = require("@opentelemetry/api-logs") as typeof import("@opentelemetry/api-logs");
  const processors = s.logs.map((name) => {
    if (name === "console") return new sdk.SimpleLogRecordProcessor({ exporter: new sdk.ConsoleLogRecordExporter() });
    const { AzureMonitorLogExporter } =
      require("@azure/monitor-opentelemetry-exporter") as typeof import("@azure/monitor-opentelemetry-exporter");
    return new sdk.BatchLogRecordProcessor({
      exporter: new AzureMonitorLogExporter({
        connectionString: s.connectionString as string,
        ...(credential ? { credential } : {}),
      }),
    });
  });
  const provider = new sdk.LoggerProvider({ resource, processors });
  logs.setGlobalLoggerProvider(provider);
  return provider;
}

/**
 * Starts what the environment asks for; undefined when it asks for nothing. `functionsModule` is the loaded
 * `@azure/functions`: with logs exported by the worker, the Functions instrumentation tells the host so (no duplicates)
 * and hands every invocation's log to OpenTelemetry.
 */
export function startTelemetry(
  env: NodeJS.ProcessEnv,
  functionsModule?: unknown,
  warn: (line: string) => void = console.warn,
): Telemetry | undefined {
  const switches = telemetrySwitches(env);
  for (const why of switches.ignored)
    warn(JSON.stringify({ level: "warn", event: "telemetry.setting-ignored", reason: why }));
  if (telemetryOff(switches)) return undefined;
  const resource = resourceOf(env);
  const credential = [...switches.metrics, ...switches.traces, ...switches.logs].includes("azuremonitor")
    ? credentialFor(env)
    : undefined;
  type Provider = { forceFlush(): Promise<void>; shutdown(): Promise<void> };
  const providers: Provider[] = [];
  const spansAndLogs: Provider[] = [];
  if (switches.metrics.length) providers.push(startMetrics(switches, resource, credential));
  if (switches.traces.length) {
    const traces = startTraces(switches, resource, credential);
    providers.push(traces);
    spansAndLogs.push(traces);
  }
  if (switches.logs.length) {
    const logs = startLogs(switches, resource, credential);
    providers.push(logs);
    spansAndLogs.push(logs);
    if (functionsModule) {
      const { AzureFunctionsInstrumentationESM } =
        require("@azure/functions-opentelemetry-instrumentation") as typeof import("@azure/functions-opentelemetry-instrumentation");
      try {
        new AzureFunctionsInstrumentationESM({ enabled: false }).registerAzFunc(functionsModule as never);
      } catch (err) {
        // A host without the log hook (the local runtime has none): the logs still go out through the console.
        warn(
          JSON.stringify({
            level: "warn",
            event: "telemetry.functions-instrumentation-unavailable",
            reason: (err as Error).message,
          }),
        );
      }
    }
  }
  return {
    switches,
    forceFlush: async () => {
      await Promise.all(providers.map((p) => p.forceFlush()));
    },
    flushSpansAndLogs: async () => {
      await Promise.all(spansAndLogs.map((p) => p.forceFlush()));
    },
    shutdown: async () => {
      await Promise.all(providers.map((p) => p.shutdown()));
    },
  };
}
