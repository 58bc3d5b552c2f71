/**
 * Which exporter each signal goes to, from the standard environment: OTEL_SDK_DISABLED, OTEL_METRICS_EXPORTER,
 * OTEL_TRACES_EXPORTER, OTEL_LOGS_EXPORTER (comma lists of console, azuremonitor, none), OTEL_METRIC_EXPORT_INTERVAL,
 * and APPLICATIONINSIGHTS_CONNECTION_STRING, which makes azuremonitor the default of every signal (unset: none, since
 * this app ships no OTLP exporter). Pure, so the switches are tested without starting anything.
 */

export type ExporterName = "console" | "azuremonitor";

export interface TelemetrySwitches {
  metrics: ExporterName[];
  traces: ExporterName[];
  logs: ExporterName[];
  metricIntervalMs: number;
  connectionString?: string;
  /** What was asked for and is not supported (otlp, a typo), to warn about once. */
  ignored: string[];
}

const KNOWN = new Set(["console", "azuremonitor", "none"]);

function exporters(env: NodeJS.ProcessEnv, name: string, fallback: ExporterName[], ignored: string[]): ExporterName[] {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const out: ExporterName[] = [];
  for (const part of raw
    .split(",")
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean)) {
    if (!KNOWN.has(part)) ignored.push(`${name}: ${part} is not supported here (console, azuremonitor or none)`);
    else if (part === "none") return [];
    else if (!out.includes(part as ExporterName)) out.push(part as ExporterName);
  }
  return out;
}

export function telemetrySwitches(env: NodeJS.ProcessEnv): TelemetrySwitches {
  const ignored: string[] = [];
  const connectionString = env.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim() || undefined;
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  const metricIntervalMs = Number.isFinite(interval) && interval > 0 ? interval : 60_000;
  if (env.OTEL_METRIC_EXPORT_INTERVAL && !(Number.isFinite(interval) && interval > 0))
    ignored.push(
      `OTEL_METRIC_EXPORT_INTERVAL: ${env.OTEL_METRIC_EXPORT_INTERVAL} is not a positive number of milliseconds (60000 used)`,
    );
  if (/^true$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? ""))
    return { metrics: [], traces: [], logs: [], metricIntervalMs, ignored };
  const fallback: ExporterName[] = connectionString ? ["azuremonitor"] : [];
  const s: TelemetrySwitches = {
    metrics: exporters(env, "OTEL_METRICS_EXPORTER", fallback, ignored),
    traces: exporters(env, "OTEL_TRACES_EXPORTER", fallback, ignored),
    logs: exporters(env, "OTEL_LOGS_EXPORTER", fallback, ignored),
    metricIntervalMs,
    ignored,
    ...(connectionString ? { connectionString } : {}),
  };
  for (const signal of ["metrics", "traces", "logs"] as const) {
    if (s[signal].includes("azuremonitor") && !connectionString) {
      ignored.push(`${signal}: azuremonitor needs APPLICATIONINSIGHTS_CONNECTION_STRING`);
      s[signal] = s[signal].filter((e) => e !== "azuremonitor");
    }
  }
  return s;
}

export const telemetryOff = (s: TelemetrySwitches) =>
  s.metrics.length === 0 && s.traces.length === 0 && s.logs.length === 0;

/**
 * `ClientId=<guid>;Authorization=AAD` (APPLICATIONINSIGHTS_AUTHENTICATION_STRING): the identity the template grants
 * Monitoring Metrics Publisher.
 */
export function authenticationClientId(env: NodeJS.ProcessEnv): string | undefined {
  const m = /(?:^|;)\s*ClientId\s*=\s*([^;]+)/i.exec(env.APPLICATIONINSIGHTS_AUTHENTICATION_STRING ?? "");
  return m?.[1]?.trim() || undefined;
}
