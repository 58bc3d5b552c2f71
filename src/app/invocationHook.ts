import type { InvocationContext, PreInvocationContext } from "@azure/functions";
import { context as otelContext, propagation, SpanKind } from "@opentelemetry/api";
import { inSpan } from "../telemetry/tracing";
import { runInInvocation, type InvocationScope, type LogLevel } from "../telemetry/invocation";

/** The part of `@azure/functions`' `app` this needs (tests pass a stand-in's). */
export interface HookRegistrar {
  hook: { preInvocation(handler: (context: PreInvocationContext) => void): unknown };
}

const WRITE: Record<LogLevel, (c: InvocationContext, line: string) => void> = {
  info: (c, l) => c.log(l),
  warn: (c, l) => c.warn(l),
  error: (c, l) => c.error(l),
};

export function scopeOf(context: InvocationContext): InvocationScope {
  return {
    invocationId: context.invocationId,
    functionName: context.functionName,
    write: (level, line) => WRITE[level](context, line),
  };
}

/**
 * One request per invocation. Application Insights counts a SERVER or CONSUMER span as a request: with
 * `telemetryMode: OpenTelemetry` (host.json) the host records the invocation's request itself and hands the worker its
 * trace context, so the worker's own span is INTERNAL beneath it. Without a trace context from the host (the local
 * runtime, a host with telemetry off) nobody else records the invocation, and the worker's span is the request.
 */
export function invocationSpanKind(triggerType: string | undefined, hostTraced: boolean): SpanKind {
  if (hostTraced) return SpanKind.INTERNAL;
  return triggerType === "httpTrigger" ? SpanKind.SERVER : SpanKind.CONSUMER;
}

/**
 * Every handler runs inside its invocation's scope (AsyncLocalStorage) and the host's trace context, so the logger and
 * the spans of deep code belong to the invocation without anything passed by hand.
 */
export function registerInvocationHook(app: HookRegistrar): void {
  app.hook.preInvocation((pre) => {
    const scope = scopeOf(pre.invocationContext);
    const handler = pre.functionHandler;
    const tc = pre.invocationContext.traceContext;
    const traced = tc?.traceParent
      ? propagation.extract(otelContext.active(), { traceparent: tc.traceParent, tracestate: tc.traceState ?? "" })
      : undefined;
    const name = pre.invocationContext.functionName;
    const kind = invocationSpanKind(pre.invocationContext.options?.trigger?.type, traced !== undefined);
    // One span per invocation (a child of the host's when it sends one): what the handler does hangs under it.
    const invoke = (...args: Parameters<typeof handler>) =>
      inSpan(
        `invoke ${name}`,
        { kind, attributes: { "faas.invocation_id": scope.invocationId, "faas.name": name } },
        async () => (await handler(...args)) as unknown,
      );
    pre.functionHandler = (...args: Parameters<typeof handler>) =>
      runInInvocation(scope, () => (traced ? otelContext.with(traced, () => invoke(...args)) : invoke(...args)));
  });
}
