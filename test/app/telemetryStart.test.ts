import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * src/app/telemetryStart.ts runs once per process, when the first function file imports it, before the host's first
 * invocation: so each case is a process of its own (test/app/fixtures/telemetryStartProbe.ts) with the environment
 * the test gives it, and `@azure/functions` registering its hooks through the local runtime's worker stand-in.
 */
const REPO = join(__dirname, "..", "..");

interface Probe {
  started: { traces: string[] } | null;
  hooks: Record<"preInvocation" | "postInvocation" | "appStart" | "appTerminate", number>;
  /** The JSON lines the process wrote to stderr. */
  errors: Array<Record<string, unknown>>;
}

async function startWith(env: Record<string, string>): Promise<Probe> {
  const { stdout, stderr } = await promisify(execFile)(
    join(REPO, "node_modules", ".bin", "tsx"),
    [join(REPO, "test", "app", "fixtures", "telemetryStartProbe.ts")],
    { cwd: REPO, env: { PATH: process.env.PATH ?? "", ...env } },
  );
  const errors = stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...(JSON.parse(stdout.trim().split("\n").pop()!) as Omit<Probe, "errors">), errors };
}

/** The invocation hook alone: every handler in its invocation's scope, whatever telemetry does. */
const INVOCATION_HOOK_ONLY = { preInvocation: 1, postInvocation: 0, appStart: 0, appTerminate: 0 };

describe("telemetryStart", () => {
  it("without a telemetry setting: the invocation hook alone, no telemetry started, no flushes", async () => {
    const p = await startWith({});
    expect(p).toEqual({ started: null, hooks: INVOCATION_HOOK_ONLY, errors: [] });
  });

  it("with an exporter asked for: telemetry started as the environment says, with its flushes around invocations and on stop", async () => {
    const p = await startWith({ OTEL_TRACES_EXPORTER: "console" });
    expect(p.started).toMatchObject({ traces: ["console"] });
    // The invocation hook, and the flush's count of invocations in flight (telemetryFlush.ts); importing twice adds none.
    expect(p.hooks).toEqual({ preInvocation: 2, postInvocation: 1, appStart: 0, appTerminate: 1 });
    expect(p.errors).toEqual([]);
  });

  it("telemetry that cannot start never keeps the app from starting: the reason logged, the app run without it", async () => {
    const p = await startWith({ APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=" });
    expect(p.started).toBeNull();
    expect(p.hooks).toEqual(INVOCATION_HOOK_ONLY);
    expect(p.errors).toEqual([
      {
        level: "error",
        event: "telemetry.start-failed",
        // The exporter's own words (its version's), naming what is missing.
        reason: expect.stringMatching(/instrumentation key/i),
      },
    ]);
  });
});
