import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";

/** host.json's `extensions.queues`, with the Storage Queues extension (v5) defaults for whatever is left out. */
export interface QueueHostOptions {
  batchSize: number;
  newBatchThreshold: number;
  maxPollingIntervalMs: number;
  visibilityTimeoutMs: number;
  maxDequeueCount: number;
  messageEncoding: "base64" | "none";
}

export interface HostConfig {
  queues: QueueHostOptions;
  /** `extensions.http.routePrefix`, default "api" (empty string means routes sit at the root). */
  httpRoutePrefix: string;
  /** `functionTimeout` in ms; undefined means none (`null` or `"-1"`, as on a Dedicated plan). */
  functionTimeoutMs: number | undefined;
}

/**
 * The host's `functionTimeout` when host.json leaves it out: 30 minutes, its default on every plan but the
 * Consumption plan's 5 minutes (Flex Consumption, Premium, Dedicated).
 */
export const DEFAULT_FUNCTION_TIMEOUT = "00:30:00";

/** The app setting the host reads over host.json's `functionTimeout` (`AzureFunctionsJobHost__<path>` overrides). */
export const FUNCTION_TIMEOUT_SETTING = "AzureFunctionsJobHost__functionTimeout";

/**
 * `functionTimeout` as the host reads it: the app setting over host.json, host.json over the default; a TimeSpan
 * of at least one second, or `null` / `"-1"` for none.
 */
export function functionTimeoutFrom(hostJson: unknown, setting: string | undefined): number | undefined {
  const [raw, where] =
    setting !== undefined && setting.trim() !== ""
      ? [setting, FUNCTION_TIMEOUT_SETTING]
      : hostJson === undefined
        ? [DEFAULT_FUNCTION_TIMEOUT, "the default functionTimeout"]
        : [hostJson, "host.json functionTimeout"];
  if (raw === null || (typeof raw === "string" && raw.trim() === "-1")) return undefined;
  if (typeof raw !== "string") throw new Error(`${where}: must be a TimeSpan string like "00:10:00", or null`);
  const ms = parseTimeSpan(raw, where);
  if (ms < 1000) throw new Error(`${where}: must be at least 00:00:01, got "${raw}"`);
  return ms;
}

/** The host's minimum poll interval: the backoff starts here and returns here whenever a poll finds messages. */
export const QUEUE_MIN_POLLING_INTERVAL_MS = 100;

/**
 * Parses a .NET TimeSpan as host.json writes it: `[d.]hh:mm:ss[.fffffff]`. Numbers are not accepted: the host
 * reads them as days (`"2"` is two days), a classic surprise, so refusing them is kinder than guessing.
 */
export function parseTimeSpan(text: string, what: string): number {
  const m = /^(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,7}))?$/.exec(text.trim());
  if (!m) throw new Error(`${what}: "${text}" is not a TimeSpan like "00:00:30"`);
  const [, d, h, min, s, frac] = m;
  const ms = frac ? Math.round(Number(`0.${frac}`) * 1000) : 0;
  return ((Number(d ?? 0) * 24 + Number(h)) * 60 + Number(min)) * 60_000 + Number(s) * 1000 + ms;
}

export function queueOptionsFrom(raw: Record<string, unknown> | undefined): QueueHostOptions {
  const q = raw ?? {};
  const int = (key: string, def: number, min: number, max: number): number => {
    const v = q[key];
    if (v === undefined) return def;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
      throw new Error(
        `host.json extensions.queues.${key}: must be a whole number between ${min} and ${max}, got ${JSON.stringify(v)}`,
      );
    }
    return v;
  };
  const span = (key: string, def: number): number => {
    const v = q[key];
    if (v === undefined) return def;
    if (typeof v !== "string")
      throw new Error(`host.json extensions.queues.${key}: must be a TimeSpan string like "00:00:30"`);
    return parseTimeSpan(v, `host.json extensions.queues.${key}`);
  };
  const batchSize = int("batchSize", 16, 1, 32);
  // The extension's default threshold is batchSize/2 per core: N*batchSize/2 in the docs.
  const newBatchThreshold = int("newBatchThreshold", Math.floor(batchSize / 2) * availableParallelism(), 0, 10_000);
  const encoding = q.messageEncoding ?? "base64";
  if (encoding !== "base64" && encoding !== "none") {
    throw new Error(
      `host.json extensions.queues.messageEncoding: must be "base64" or "none", got ${JSON.stringify(encoding)}`,
    );
  }
  const maxPollingIntervalMs = span("maxPollingInterval", 60_000);
  if (maxPollingIntervalMs < QUEUE_MIN_POLLING_INTERVAL_MS) {
    throw new Error(`host.json extensions.queues.maxPollingInterval: must be at least 00:00:00.1`);
  }
  return {
    batchSize,
    newBatchThreshold,
    maxPollingIntervalMs,
    visibilityTimeoutMs: span("visibilityTimeout", 0),
    maxDequeueCount: int("maxDequeueCount", 5, 1, 10_000),
    messageEncoding: encoding,
  };
}

/** host.json in appDir; `env` supplies the app settings that override it (`AzureFunctionsJobHost__functionTimeout`). */
export function loadHostConfig(appDir: string, env: Record<string, string | undefined> = {}): HostConfig {
  const file = join(appDir, "host.json");
  let json: {
    functionTimeout?: unknown;
    extensions?: { queues?: Record<string, unknown>; http?: { routePrefix?: unknown } };
  } = {};
  if (existsSync(file)) {
    try {
      json = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new Error(`${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
    }
  }
  const prefix = json.extensions?.http?.routePrefix;
  return {
    queues: queueOptionsFrom(json.extensions?.queues),
    httpRoutePrefix: typeof prefix === "string" ? prefix.replace(/^\/+|\/+$/g, "") : "api",
    functionTimeoutMs: functionTimeoutFrom(json.functionTimeout, env[FUNCTION_TIMEOUT_SETTING]),
  };
}
