import type { RpcTypedData } from "./coreTypes";

/**
 * Host-side encoding of a value into the worker protocol's TypedData, as the Functions host's `ToRpc` does:
 * strings travel as `string` (the library then JSON-parses them when they parse), bytes as `bytes`, and anything
 * else (numbers, dates, objects) as `json` via the host's JSON serialiser. Keeping this one rule in one place means
 * every trigger hands the library the same shapes the host would, and the library's own `fromRpcTypedData` decides
 * what the handler sees.
 */
export function toHostTypedData(value: unknown): RpcTypedData {
  if (value === null || value === undefined) return {};
  if (typeof value === "string") return { string: value };
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return { bytes: value };
  if (value instanceof Date) return { json: JSON.stringify(toDotNetDateString(value)) };
  return { json: JSON.stringify(value) };
}

export function toHostTriggerMetadata(metadata: Record<string, unknown>): Record<string, RpcTypedData> {
  const out: Record<string, RpcTypedData> = {};
  for (const [key, value] of Object.entries(metadata)) out[key] = toHostTypedData(value);
  return out;
}

/**
 * How the host's JSON serialiser (Newtonsoft, ISO dates) writes a DateTimeOffset: local wall time with the offset,
 * fractional seconds only when non-zero. UTC offsets come out as `+00:00`, never `Z`.
 */
export function toDotNetDateString(date: Date): string {
  const pad = (n: number, w = 2) => String(Math.trunc(Math.abs(n))).padStart(w, "0");
  const offsetMin = -date.getTimezoneOffset();
  const sign = offsetMin >= 0 ? "+" : "-";
  const ms = date.getMilliseconds();
  const fraction = ms ? `.${pad(ms, 3).replace(/0+$/, "")}` : "";
  return (
    `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${fraction}` +
    `${sign}${pad(offsetMin / 60)}:${pad(offsetMin % 60)}`
  );
}

/** `{ MethodName, UtcNow, RandGuid }`: the `sys` binding data the script host adds to every invocation. */
export function sysBindingData(functionName: string, now: Date, randGuid: string): Record<string, unknown> {
  return { MethodName: functionName, UtcNow: now.toISOString(), RandGuid: randGuid };
}
