import type { Logger } from "../core/ports";
import { currentInvocation } from "../telemetry/invocation";

type Level = "info" | "warn" | "error";

/**
 * The Functions Node.js worker (v4) records console.log as Information, console.warn as Warning and console.error as
 * Error in Application Insights: each level goes to its own console method, so an error is found as an error.
 */
const CONSOLE: Record<Level, (line: string) => void> = {
  info: (l) => console.log(l),
  warn: (l) => console.warn(l),
  error: (l) => console.error(l),
};

/**
 * One JSON object per line, so the scale set, pool, ETags and outcome of every write are queryable fields. Inside an
 * invocation (src/app/invocationHook.ts) a line carries its invocationId and goes through the invocation's own log,
 * which the host records against the invocation; outside one (start-up, tests) it goes to the console.
 */
export function jsonLogger(sink?: (line: string, level: Level) => void, now: () => number = Date.now): Logger {
  const emit = (level: Level) => (event: string, fields: Record<string, unknown>) => {
    const invocation = currentInvocation();
    const line = JSON.stringify({
      ts: new Date(now()).toISOString(),
      level,
      event,
      ...(invocation ? { invocationId: invocation.invocationId } : {}),
      ...fields,
    });
    if (sink) sink(line, level);
    else if (invocation?.write) invocation.write(level, line);
    else CONSOLE[level](line);
  };
  return { info: emit("info"), warn: emit("warn"), error: emit("error") };
}

/** Keeps the lines in memory as objects; for tests that assert what was logged. */
export function memoryLogger(): Logger & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const push = (level: string) => (event: string, fields: Record<string, unknown>) =>
    lines.push({ level, event, ...fields });
  return { lines, info: push("info"), warn: push("warn"), error: push("error") };
}
