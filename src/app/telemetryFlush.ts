/**
 * When telemetry leaves the process. Spans and logs wait in batch processors (up to 5 s) and metrics for their export
 * interval; Flex Consumption freezes an idle instance and reclaims it at any time, and what still waits then is lost.
 * So: spans and logs are flushed when the last invocation in flight ends (not after every one, which in a burst would
 * cost an export per invocation), and everything, metrics included, when the host stops the worker (appTerminate).
 */

/** The part of `@azure/functions`' `app` this needs (tests pass a stand-in's). */
export interface FlushHookRegistrar {
  hook: {
    preInvocation(handler: (context: unknown) => void): unknown;
    postInvocation(handler: (context: unknown) => Promise<void>): unknown;
    appTerminate(handler: (context: unknown) => Promise<void>): unknown;
  };
}

export interface Flushable {
  /** Exports the spans and log records waiting in their batch processors. */
  flushSpansAndLogs(): Promise<void>;
  /** Flushes every signal and stops the providers. */
  shutdown(): Promise<void>;
}

export function registerTelemetryFlush(
  app: FlushHookRegistrar,
  telemetry: Flushable,
  warn: (line: string) => void = console.warn,
): void {
  let inFlight = 0;
  const failed = (event: string) => (err: unknown) =>
    warn(JSON.stringify({ level: "warn", event, reason: (err as Error).message }));
  app.hook.preInvocation(() => {
    inFlight++;
  });
  app.hook.postInvocation(async () => {
    inFlight = Math.max(0, inFlight - 1);
    if (inFlight === 0) await telemetry.flushSpansAndLogs().catch(failed("telemetry.flush-failed"));
  });
  app.hook.appTerminate(async () => {
    await telemetry.shutdown().catch(failed("telemetry.shutdown-failed"));
  });
}
