import { SpanStatusCode } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { currentTraceparent, inSpan } from "../../src/telemetry/tracing";
import { startInMemoryTelemetry } from "../support/otel";

let otel: ReturnType<typeof startInMemoryTelemetry>;
beforeEach(() => {
  otel = startInMemoryTelemetry();
});
afterEach(async () => {
  await otel.stop();
});

const MESSAGE_TRACE = "0af7651916cd43dd8448eb211c80319c";
const MESSAGE_PARENT = `00-${MESSAGE_TRACE}-b7ad6b7169203331-01`;

describe("tracing", () => {
  it("hands an enqueued message the active span's traceparent, and none outside a span", async () => {
    expect(currentTraceparent()).toBeUndefined();
    const tp = await inSpan("poolsync.reconcile", {}, async (span) => {
      expect(currentTraceparent()).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      return currentTraceparent();
    });
    expect(tp).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });

  it("continues a message's trace, linking the invocation's own span", async () => {
    await inSpan("invocation", {}, async (invocation) => {
      await inSpan(
        "poolsync.reconcile",
        { parent: MESSAGE_PARENT, attributes: { target: "t" } },
        async () => undefined,
      );
      const reconcile = otel.spans().find((s) => s.name === "poolsync.reconcile");
      expect(reconcile?.spanContext().traceId).toBe(MESSAGE_TRACE);
      expect(reconcile?.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
      expect(reconcile?.attributes).toEqual({ target: "t" });
      expect(reconcile?.links.map((l) => [l.context.spanId, l.attributes])).toEqual([
        [invocation.spanContext().spanId, { "poolsync.link": "invocation" }],
      ]);
    });
  });

  it("ignores a parent that is not a traceparent: the span stays in the active trace", async () => {
    await inSpan("outer", {}, async (outer) => {
      await inSpan("inner", { parent: "00-not-a-traceparent" }, async () => undefined);
      expect(
        otel
          .spans()
          .find((s) => s.name === "inner")
          ?.spanContext().traceId,
      ).toBe(outer.spanContext().traceId);
    });
  });

  it("ends a span that threw as failed with the reason, and rethrows", async () => {
    await expect(
      inSpan("poolsync.timer", {}, async () => {
        throw new Error("storage down");
      }),
    ).rejects.toThrow("storage down");
    const [span] = otel.spans();
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: "storage down" });
    expect(span?.events.map((e) => e.name)).toEqual(["exception"]);
  });
});
