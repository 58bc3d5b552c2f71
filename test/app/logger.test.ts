import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonLogger } from "../../src/app/logger";

/**
 * The Functions worker maps console methods to log levels: an error logged through console.log would be Information.
 */
describe("jsonLogger levels", () => {
  afterEach(() => vi.restoreAllMocks());

  it("writes info to console.log, warn to console.warn, error to console.error, one JSON object each", () => {
    const seen: Array<[string, string]> = [];
    for (const m of ["log", "warn", "error"] as const)
      vi.spyOn(console, m).mockImplementation((line: string) => void seen.push([m, line]));
    const log = jsonLogger(undefined, () => Date.parse("2026-12-03T00:00:00Z"));
    log.info("a", { x: 1 });
    log.warn("b", {});
    log.error("c", { scaleSetId: "s" });
    expect(seen.map(([m, line]) => [m, JSON.parse(line)])).toEqual([
      ["log", { ts: "2026-12-03T00:00:00.000Z", level: "info", event: "a", x: 1 }],
      ["warn", { ts: "2026-12-03T00:00:00.000Z", level: "warn", event: "b" }],
      ["error", { ts: "2026-12-03T00:00:00.000Z", level: "error", event: "c", scaleSetId: "s" }],
    ]);
  });
});
