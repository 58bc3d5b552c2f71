import { describe, expect, it } from "vitest";
import { formatDryRun, formatPlan } from "../../src/cli/planText";

type Plan = Parameters<typeof formatPlan>[0];

const plan = (fields: Partial<Plan>): Plan => ({
  targetId: "/vmss/web",
  declarations: 1,
  writes: [],
  basedOn: { source: "cache", oldestAgeMs: 12_400 },
  ...fields,
});

describe("a plan in the terminal", () => {
  it("says there is nothing to write, what it was based on and how old", () => {
    expect(formatPlan(plan({}))).toBe(
      "plan for /vmss/web: nothing to write (1 declaration; based on the cache, oldest 12 s old)",
    );
  });

  it("lists each write with its If-Match, then each ip configuration's and address's gain and loss", () => {
    const text = formatPlan(
      plan({
        declarations: 2,
        basedOn: { source: "mixed", oldestAgeMs: 0 },
        writes: [
          {
            kind: "model",
            id: "/vmss/web",
            ifMatch: 'W/"3"',
            basedOn: { source: "arm", ageMs: 1_600 },
            ipConfigurations: [
              { nicConfiguration: "nic", ipConfiguration: "ipconfig1", gain: ["/pools/a"], lose: ["/pools/b"] },
            ],
          },
          {
            kind: "pool",
            id: "/pools/ip",
            ifMatch: 'W/"9"',
            basedOn: { source: "cache", ageMs: 0 },
            ipConfigurations: [],
            addresses: { gain: ["10.0.0.4"], lose: [] },
          },
        ],
      }),
    );
    expect(text.split("\n")).toEqual([
      "plan for /vmss/web: 2 writes (2 declarations; based on the cache and ARM, oldest 0 s old)",
      '  model /vmss/web  If-Match W/"3"  (arm, 2 s old)',
      "    nic/ipconfig1  + /pools/a",
      "    nic/ipconfig1  - /pools/b",
      '  pool /pools/ip  If-Match W/"9"  (cache, 0 s old)',
      "    address  + 10.0.0.4",
    ]);
  });

  it("names what it will not write and what would fail, the primary ip configuration by that word", () => {
    const text = formatPlan(
      plan({
        skipped: [{ backendPoolId: "/pools/a", ipConfiguration: "", reason: "waits for its retry" }],
        unplaceable: [{ backendPoolId: "/pools/b", ipConfiguration: "nic/ip2", reason: "no such ip configuration" }],
      }),
    );
    expect(text).toContain("\n  not written: /pools/a (primary): waits for its retry");
    expect(text).toContain("\n  would fail: /pools/b (nic/ip2): no such ip configuration");
  });

  it("says a plan cut short by its read bound is partial, naming what it did not read and counting the rest", () => {
    const text = formatPlan(
      plan({ reads: { made: 2, limit: 2, cutShort: true, notRead: ["/vms/3"], notReadCount: 4 } }),
    );
    expect(text.split("\n").slice(1)).toEqual([
      "  partial plan: the bound of 2 ARM reads (POOLSYNC_PLAN_MAX_READS) left 4 resources unread and unplanned:",
      "    not read: /vms/3",
      "    and 3 more",
    ]);
    expect(formatPlan(plan({ reads: { made: 1, limit: 2, cutShort: false } }))).not.toContain("partial");
  });

  it("heads a dry run with what it would store, and that nothing was stored, queued or written", () => {
    const text = formatDryRun({
      wouldStore: { state: "present", backendPoolId: "/pools/a", targetId: "/vmss/web" },
      plan: plan({}),
    });
    expect(text.split("\n").slice(0, 2)).toEqual([
      "dry run: nothing stored, queued or written",
      "would store: present /pools/a on /vmss/web",
    ]);
  });
});
