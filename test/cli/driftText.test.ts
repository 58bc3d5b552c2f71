import { describe, expect, it } from "vitest";
import { driftLine } from "../../src/cli/driftText";
import type { DriftAnswer } from "../../src/intake/driftView";

const drift: DriftAnswer = {
  resourceKind: "nic",
  resourceId: "/nics/web-1-nic",
  source: "event",
  at: "2026-12-01T10:00:00.000Z",
  repairedAt: null,
  by: { name: "bob", id: "oid-b", appId: "app-b" },
  correlationId: "corr-1",
  operation: "Microsoft.Network/networkInterfaces/write",
};

describe("a drift in the terminal", () => {
  it("names the writer's ids in full, what it did to which resource, how it was seen, and that it is not repaired", () => {
    expect(driftLine(drift)).toBe(
      "    drift 2026-12-01T10:00:00.000Z by bob (object oid-b, app app-b) Microsoft.Network/networkInterfaces/write on nic /nics/web-1-nic; seen by its event, correlation corr-1; not repaired yet",
    );
  });

  it("says when it was repaired, that the timer found it, and leaves out a correlation it does not have", () => {
    const line = driftLine({ ...drift, source: "timer", correlationId: "", repairedAt: "2026-12-01T10:01:00.000Z" });
    expect(line).toMatch(/; found by the timer; repaired 2026-12-01T10:01:00\.000Z$/);
    expect(line).not.toContain("correlation");
  });

  it("prints nothing for a membership with no drift", () => {
    expect(driftLine(null)).toBeUndefined();
    expect(driftLine(undefined)).toBeUndefined();
  });
});
