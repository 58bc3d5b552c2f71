import { describe, expect, it } from "vitest";
import { FAULTS, formatTable, runSoak } from "./soak";

/**
 * A short fixed-seed soak as part of npm test: every simulator and platform fault at least once, then the
 * invariants. The long runs are `npm run soak -- --seed N --minutes M` (docs/faults.md).
 */
describe("soak (seed 20261202, 30 s of chaos)", () => {
  it("holds every invariant under every fault", async () => {
    const r = await runSoak({ seed: 20261202, minutes: 0.5, maxSteps: 160, timeScale: 60 });
    if (r.violations.length > 0) console.log(`${formatTable(r)}\n${JSON.stringify(r.counters)}\n${r.plan.join("\n")}`);
    expect(r.violations).toEqual([]);
    const untried = r.faults.filter((f) => f.tried === 0).map((f) => f.fault);
    // Everything but the rare event faults is tried for sure; those depend on how many events the run made.
    expect(untried.filter((f) => !f.startsWith("event "))).toEqual([]);
    expect(r.faults.map((f) => f.fault)).toEqual([...FAULTS]);
    expect(r.counters["check:declaration-applied"] ?? 0).toBeGreaterThan(0);
    // The Flexible scale set was declared and checked on its model and its VMs' NICs, with other writers on them: an
    // applied row, or a finished absent the timer removed (both are checked against the model and every NIC).
    const flexChecked =
      (r.counters["check:flex-declaration-applied"] ?? 0) +
      (r.counters["check:flex-declaration-absent-finished-and-removed"] ?? 0);
    expect(flexChecked).toBeGreaterThan(0);
  }, 180_000);

  it("with three hosts polling the queue, a kill taking one host at a time, every invariant still holds", async () => {
    const r = await runSoak({ seed: 20261203, minutes: 0.5, maxSteps: 160, timeScale: 60, hosts: 3 });
    if (r.violations.length > 0) console.log(`${formatTable(r)}\n${JSON.stringify(r.counters)}\n${r.plan.join("\n")}`);
    expect(r.violations).toEqual([]);
    expect(r.faults.find((f) => f.fault === "invocation killed mid-reconcile")?.tried).toBeGreaterThan(0);
    expect(r.counters["check:declaration-applied"] ?? 0).toBeGreaterThan(0);
  }, 180_000);
});
