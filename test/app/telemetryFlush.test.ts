import { describe, expect, it } from "vitest";
import { registerTelemetryFlush, type Flushable } from "../../src/app/telemetryFlush";
import { standInApp } from "../support/standInApp";

/** What the flush hooks asked of telemetry, in order; `fail` makes each ask reject. */
function recordingTelemetry(fail = false): Flushable & { asked: string[] } {
  const asked: string[] = [];
  const ask = (what: string) => async () => {
    asked.push(what);
    if (fail) throw new Error(`${what} refused`);
  };
  return { asked, flushSpansAndLogs: ask("flush"), shutdown: ask("shutdown") };
}

/** The flush hooks registered on a stand-in app, over telemetry that records what it is asked. */
function registered() {
  const app = standInApp();
  const telemetry = recordingTelemetry();
  registerTelemetryFlush(app, telemetry);
  return { app, telemetry };
}

describe("telemetry flushes", () => {
  it("flushes spans and logs when the last invocation in flight ends, not after each", async () => {
    const { app, telemetry } = registered();
    await app.run("preInvocation", {});
    await app.run("preInvocation", {});
    await app.run("postInvocation", {});
    expect(telemetry.asked).toEqual([]);
    await app.run("postInvocation", {});
    expect(telemetry.asked).toEqual(["flush"]);
    await app.run("appTerminate", {});
    expect(telemetry.asked).toEqual(["flush", "shutdown"]);
  });

  it("logs a failed flush or shutdown as a warning, never failing the invocation or the stop", async () => {
    const app = standInApp();
    const warnings: string[] = [];
    registerTelemetryFlush(app, recordingTelemetry(true), (line) => warnings.push(line));
    await app.run("preInvocation", {});
    await app.run("postInvocation", {});
    await app.run("appTerminate", {});
    expect(warnings.map((w) => JSON.parse(w))).toEqual([
      { level: "warn", event: "telemetry.flush-failed", reason: "flush refused" },
      { level: "warn", event: "telemetry.shutdown-failed", reason: "shutdown refused" },
    ]);
  });

  it("never counts below zero: an end without its start still lets the next invocation's end flush", async () => {
    const { app, telemetry } = registered();
    await app.run("postInvocation", {});
    await app.run("preInvocation", {});
    await app.run("postInvocation", {});
    expect(telemetry.asked).toEqual(["flush", "flush"]);
  });
});
