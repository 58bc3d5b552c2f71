import type { Logger } from "../core/ports";

/** One JSON object per line, so the scale set, pool, ETags and outcome of every write are queryable fields. */
export function jsonLogger(sink: (line: string) => void = (l) => console.log(l), now: () => number = Date.now): Logger {
  const emit = (level: string) => (event: string, fields: Record<string, unknown>) =>
    sink(JSON.stringify({ ts: new Date(now()).toISOString(), level, event, ...fields }));
  return { info: emit("info"), warn: emit("warn"), error: emit("error") };
}

/** Keeps the lines in memory as objects; for tests that assert what was logged. */
export function memoryLogger(): Logger & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const push = (level: string) => (event: string, fields: Record<string, unknown>) => lines.push({ level, event, ...fields });
  return { lines, info: push("info"), warn: push("warn"), error: push("error") };
}
