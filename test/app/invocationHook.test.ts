import { SpanKind } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { invocationSpanKind, registerInvocationHook } from "../../src/app/invocationHook";
import { currentInvocation } from "../../src/telemetry/invocation";
import { startInMemoryTelemetry } from "../support/otel";
import { standInApp } from "../support/standInApp";

let otel: ReturnType<typeof startInMemoryTelemetry>;
beforeEach(() => {
  otel = startInMemoryTelemetry();
});
afterEach(async () => {
  await otel.stop();
});

/** One invocation as the worker plays it: the preInvocation hooks, then the handler they may have wrapped. */
async function invoke(o: { id: string; trigger: string; traceParent?: string; handler: () => Promise<unknown> }) {
  const app = standInApp();
  registerInvocationHook(app);
  const lines: string[] = [];
  const pre = {
    invocationContext: {
      invocationId: o.id,
      functionName: "applyBackendPools",
      options: { trigger: { type: o.trigger } },
      traceContext: { traceParent: o.traceParent ?? null, traceState: null },
      log: (l: string) => lines.push(`info ${l}`),
      warn: (l: string) => lines.push(`warn ${l}`),
      error: (l: string) => lines.push(`error ${l}`),
    },
    functionHandler: o.handler,
  };
  await app.run("preInvocation", pre);
  const result = await pre.functionHandler();
  return { result, lines };
}

describe("the invocation hook", () => {
  it("makes the worker's span the request only when the host traced nothing", () => {
    expect(invocationSpanKind("httpTrigger", false)).toBe(SpanKind.SERVER);
    expect(invocationSpanKind("queueTrigger", false)).toBe(SpanKind.CONSUMER);
    expect(invocationSpanKind("httpTrigger", true)).toBe(SpanKind.INTERNAL);
  });

  it("runs the handler inside its invocation: deep code's lines go to the invocation's own log", async () => {
    const { result, lines } = await invoke({
      id: "inv-7",
      trigger: "queueTrigger",
      handler: async () => {
        currentInvocation()?.write?.("warn", "arm.write throttled");
        currentInvocation()?.write?.("error", "pass failed");
        return currentInvocation()?.invocationId;
      },
    });
    expect(result).toBe("inv-7");
    expect(lines).toEqual(["warn arm.write throttled", "error pass failed"]);
  });

  it("wraps the handler in one span per invocation, under the host's trace when it sends one", async () => {
    await invoke({
      id: "inv-8",
      trigger: "httpTrigger",
      traceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      handler: async () => undefined,
    });
    await invoke({ id: "inv-9", trigger: "httpTrigger", handler: async () => undefined });
    const spans = otel
      .spans()
      .map((s) => [s.name, s.kind, s.attributes["faas.invocation_id"], s.spanContext().traceId]);
    expect(spans[0]).toEqual([
      "invoke applyBackendPools",
      SpanKind.INTERNAL,
      "inv-8",
      "0af7651916cd43dd8448eb211c80319c",
    ]);
    expect(spans[1]?.slice(0, 3)).toEqual(["invoke applyBackendPools", SpanKind.SERVER, "inv-9"]);
    expect(spans).toHaveLength(2);
  });
});
