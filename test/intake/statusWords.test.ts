import { describe, expect, it } from "vitest";
import { formatStatus } from "../../src/cli/format";
import { formatPlan } from "../../src/cli/planText";
import { renderStatusPage } from "../../src/intake/statusPage";
import type { StatusReport } from "../../src/intake/statusReport";

/**
 * The words a first user meets right after an apply (issue 44): poolsync's own write marks the scale set's model for a
 * re-read, which is not a problem to report as "1 stale"; one scale set is not "1 scale sets"; a plan is not "based
 * on mixed".
 */

function afterOneApply(): StatusReport {
  return {
    generatedAt: "2026-01-01T00:00:10.000Z",
    declarations: {
      total: 1,
      byOutcome: { pending: 0, applied: 1, failed: 0, refused: 0, "target-deleted": 0, "target-deleting": 0 },
      byState: { present: 1, absent: 0 },
      truncated: false,
    },
    cache: {
      enabled: true,
      rows: 3,
      scaleSets: 1,
      instances: 2,
      stale: 1,
      expired: 0,
      ttlSeconds: 600,
      truncated: false,
    },
    staleEntries: [],
    queue: { name: "backendpool-updates", depth: 0, poisonName: "backendpool-updates-poison", poison: 0 },
    recent: { preconditionFailures: [], throttles: [] },
    scaleSets: [],
    scaleSetsTruncated: false,
    poison: [],
  } as unknown as StatusReport;
}

describe("status words right after an apply", () => {
  it("the page: '1 scale set', and the marked row is one to re-read, not a stale one", () => {
    const page = renderStatusPage(afterOneApply());
    expect(page).toContain("1 scale set · 2 instances");
    expect(page).not.toMatch(/1 scale sets|Stale entries/);
    expect(page).toContain("To re-read");
    expect(page).toContain("1 marked (an event, a 412 or poolsync&#39;s own write) · 0 past the 600 s TTL");
  });

  it("the CLI: the same in its one line", () => {
    expect(formatStatus(afterOneApply())).toMatch(
      /^cache rows {4}3 \(1 scale set, 2 instances; 1 marked for a re-read, 0 past the 600 s TTL\)$/m,
    );
  });

  it("a plan says what it was computed from in words", () => {
    const plan = (source: string) =>
      formatPlan({
        targetId: "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachineScaleSets/v",
        declarations: 1,
        writes: [],
        basedOn: { source, oldestAgeMs: 0 },
      } as never).split("\n")[0];
    expect(plan("mixed")).toMatch(/based on the cache and ARM, oldest 0 s old\)$/);
    expect(plan("cache")).toMatch(/based on the cache, oldest/);
  });
});
