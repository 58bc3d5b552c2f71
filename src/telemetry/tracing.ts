import { TRACEPARENT_PATTERN as TRACEPARENT } from "../core/messages";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Span,
} from "@opentelemetry/api";

/**
 * Spans poolsync makes itself (the reconcile, the event, the timer run) and the trace context a queue message carries.
 * The Azure SDK instrumentation makes one span per ARM, Table and Queue call underneath whichever of these is active.
 */

const tracer = () => trace.getTracer("poolsync");

/** The active span's traceparent, for a message about to be enqueued; undefined outside a sampled-or-not trace. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const tp = carrier.traceparent;
  return tp && TRACEPARENT.test(tp) ? tp : undefined;
}

export interface SpanOptions {
  attributes?: Attributes;
  /** Continue this trace (a queue message's traceparent) instead of the active one. */
  parent?: string | undefined;
  links?: Link[];
  kind?: SpanKind;
}

/** Runs `fn` inside a span that ends with it; a throw marks the span failed and is rethrown. */
export async function inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  let parentCtx = context.active();
  const links = [...(opts.links ?? [])];
  if (opts.parent && TRACEPARENT.test(opts.parent)) {
    // The message's trace becomes the parent; the invocation's own span (the host's, or none) stays linked.
    const invocation = trace.getSpanContext(parentCtx);
    if (invocation) links.push({ context: invocation, attributes: { "poolsync.link": "invocation" } });
    parentCtx = propagation.extract(ROOT_CONTEXT, { traceparent: opts.parent });
  }
  return tracer().startActiveSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, ...(opts.attributes ? { attributes: opts.attributes } : {}), links },
    parentCtx,
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}
