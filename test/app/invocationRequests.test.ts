import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { SpanKind } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { invocationSpanKind } from "../../src/app/invocationHook";
import { registerTelemetryFlush } from "../../src/app/telemetryFlush";

/**
 * One request per invocation (issue 44). Application Insights makes a request of every SERVER or CONSUMER span; with
 * host.json's telemetryMode OpenTelemetry the host records the invocation's request and hands the worker its trace
 * context. Proved with the console exporter, in a process of its own (test/app/fixtures/consoleSpans.ts).
 */

const REPO = join(__dirname, "..", "..");

interface PrintedSpan {
  name: string;
  kind: number;
  traceId: string;
  invocationId?: string;
}

/** The spans the console exporter printed (console.dir of each span: one object per span, at column 0). */
function parseConsoleSpans(stdout: string): PrintedSpan[] {
  return stdout
    .split(/\n(?=\{)/)
    .filter((block) => /^ {2}kind: \d/m.test(block))
    .map((block) => {
      const invocationId =
        /'faas\.invocation_id': '([^']+)'/.exec(block)?.[1] ??
        /'poolsync\.test\.invocation': '([^']+)'/.exec(block)?.[1];
      return {
        // The span's own fields are indented by two spaces; its resource's and scope's deeper.
        name: /^ {2}name: '([^']+)'/m.exec(block)?.[1] ?? "",
        kind: Number(/^ {2}kind: (\d)/m.exec(block)?.[1]),
        traceId: /^ {2}traceId: '([0-9a-f]{32})'/m.exec(block)?.[1] ?? "",
        ...(invocationId ? { invocationId } : {}),
      };
    });
}

const isRequest = (kind: number) => kind === SpanKind.SERVER || kind === SpanKind.CONSUMER;

describe("one request per invocation, as the console exporter prints them", () => {
  it("the worker adds no request where the host traced the invocation, and makes exactly one where it did not", async () => {
    const { stdout } = await promisify(execFile)(
      join(REPO, "node_modules", ".bin", "tsx"),
      [join(REPO, "test", "app", "fixtures", "consoleSpans.ts")],
      {
        cwd: REPO,
        env: {
          ...process.env,
          OTEL_TRACES_EXPORTER: "console",
          OTEL_METRICS_EXPORTER: "none",
          OTEL_LOGS_EXPORTER: "none",
        },
      },
    );
    const spans = parseConsoleSpans(stdout);
    const byInvocation = (id: string) => spans.filter((s) => s.invocationId === id);
    // Each invocation: its own invoke span and the reconcile beneath it, in one trace.
    for (const id of ["inv-host-traced", "inv-http", "inv-queue"]) {
      expect(
        byInvocation(id)
          .map((s) => s.name)
          .sort(),
        id,
      ).toEqual([expect.stringMatching(/^invoke /), "reconcile"]);
      expect(new Set(byInvocation(id).map((s) => s.traceId)).size, id).toBe(1);
    }
    // The host's request is the one for the traced invocation: the worker's spans continue its trace, none a request.
    expect(byInvocation("inv-host-traced")[0]?.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    const requests = (id: string) => byInvocation(id).filter((s) => isRequest(s.kind)).length;
    expect(requests("inv-host-traced") + 1).toBe(1);
    expect(requests("inv-http")).toBe(1);
    expect(requests("inv-queue")).toBe(1);
    expect(spans.find((s) => s.invocationId === "inv-http" && s.name.startsWith("invoke"))?.kind).toBe(SpanKind.SERVER);
  }, 60_000);

  it("the kind rule: INTERNAL under the host's trace; SERVER for HTTP and CONSUMER for the rest otherwise", () => {
    expect(invocationSpanKind("queueTrigger", true)).toBe(SpanKind.INTERNAL);
    expect(invocationSpanKind("httpTrigger", true)).toBe(SpanKind.INTERNAL);
    expect(invocationSpanKind("httpTrigger", false)).toBe(SpanKind.SERVER);
    expect(invocationSpanKind("eventGridTrigger", false)).toBe(SpanKind.CONSUMER);
  });
});

describe("flushes", () => {
  function standIn() {
    const hooks: Record<string, Array<(c: unknown) => unknown>> = { pre: [], post: [], terminate: [] };
    const app = {
      hook: {
        preInvocation: (h: (c: unknown) => void) => hooks.pre!.push(h),
        postInvocation: (h: (c: unknown) => Promise<void>) => hooks.post!.push(h),
        appTerminate: (h: (c: unknown) => Promise<void>) => hooks.terminate!.push(h),
      },
    };
    const calls: string[] = [];
    registerTelemetryFlush(app, {
      flushSpansAndLogs: async () => void calls.push("flush"),
      shutdown: async () => void calls.push("shutdown"),
    });
    const run = async (name: "pre" | "post" | "terminate") => {
      for (const h of hooks[name]!) await h({});
    };
    return { calls, run };
  }

  it("spans and logs leave when the last invocation in flight ends, not after each of a burst", async () => {
    const { calls, run } = standIn();
    await run("pre");
    await run("pre");
    await run("post");
    expect(calls).toEqual([]);
    await run("post");
    expect(calls).toEqual(["flush"]);
    await run("pre");
    await run("post");
    expect(calls).toEqual(["flush", "flush"]);
  });

  it("everything, metrics included, when the host stops the worker; a failing flush is said, never thrown", async () => {
    const { calls, run } = standIn();
    await run("terminate");
    expect(calls).toEqual(["shutdown"]);
    const warned: string[] = [];
    const app = {
      hook: {
        preInvocation: () => undefined,
        postInvocation: (h: (c: unknown) => Promise<void>) => void h({}).then(() => undefined),
        appTerminate: () => undefined,
      },
    };
    registerTelemetryFlush(
      app,
      { flushSpansAndLogs: () => Promise.reject(new Error("exporter down")), shutdown: async () => undefined },
      (l) => warned.push(l),
    );
    await new Promise((r) => setTimeout(r, 0));
    expect(warned).toEqual([
      JSON.stringify({ level: "warn", event: "telemetry.flush-failed", reason: "exporter down" }),
    ]);
  });
});
