import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseTimeSpan } from "../../local/host/hostConfig";
import { SETTINGS } from "../../src/config";

describe("host.json", () => {
  it("bounds every invocation (functionTimeout), with room for the longest wait for an ARM operation", () => {
    const host = JSON.parse(readFileSync(join(__dirname, "..", "..", "host.json"), "utf8")) as {
      functionTimeout?: string;
    };
    expect(host.functionTimeout).toBeDefined();
    const timeoutMs = parseTimeSpan(host.functionTimeout!, "functionTimeout");
    const operationWaitMs = Number(SETTINGS.POOLSYNC_OPERATION_MAX_WAIT_SECONDS.default) * 1000;
    expect(timeoutMs).toBeGreaterThanOrEqual(2 * operationWaitMs);
    expect(timeoutMs).toBeLessThanOrEqual(30 * 60_000);
  });
});
