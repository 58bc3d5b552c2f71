import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";
import type { ReadPacer } from "../../src/azure/readPacing";
import { ThrottledError } from "../../src/core/errors";

// Read pacing at the sizes Azure publishes: hundreds of reads at once through the real SDK client, paced and unpaced
// (write pacing inside CRP's budget is test/integration/pacing.test.ts).
describe("read pacing inside ARM's and CRP's published read budgets", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  /**
   * 300 GETs of 30 scale sets at once (10 each, inside CRP's per-scale-set read bucket of 36) at Azure's published
   * sizes: ARM's read bucket (250, then 25 a second) and CRP's `GetVMScaleSet3Min` window (200; 196 planned), whose
   * other 104 must wait for the first to age out of it. The simulator runs 150 times real time (its windows, ARM's
   * buckets and poolsync's clock alike), so the three minutes pass in just over a second.
   */
  const world = { seed: wideWorld({ scaleSets: 30, capacity: 1, pools: 1 }), throttling: { timeScale: 150 } };
  // Reads wait for the window in their call here (the request's timeout, 10 real s, covers the wait).
  const wide = {
    POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`,
    POOLSYNC_PACING_MAX_WAIT_SECONDS: "600",
    POOLSYNC_ARM_TIMEOUT_SECONDS: "10",
  };
  const get = (h: Harness, i: number) =>
    h.services.compute.getScaleSet(scaleSetRef(scaleSetId(WIDE_SUBSCRIPTION, "wide", `vmss-${i % 30}`)));
  const readAll = (h: Harness, n = 300) => Promise.allSettled(Array.from({ length: n }, (_, i) => get(h, i)));

  it("paces reads inside ARM's read bucket and CRP's GetVMScaleSet windows: 300 at once, none refused", async () => {
    h = await startHarness({ sim: world, env: wide, simClock: true });
    const started = h.sim.control.clock.now();
    const results = await readAll(h);
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    expect(h.sim.control.stats()).toMatchObject({ gets: 300, status429: 0 });
    // The 104 beyond the window waited for its first reads to age out of it: three minutes of the simulator's time.
    expect(h.sim.control.clock.now() - started).toBeGreaterThanOrEqual(3 * 60_000);
  });

  it("the timer's reads (background) spend at most half of a window; a reconcile's read still finds the rest", async () => {
    h = await startHarness({
      sim: world,
      env: { ...wide, POOLSYNC_PACING_MAX_WAIT_SECONDS: "5" },
      simClock: true,
    });
    const pacer = (h.services.compute as unknown as { readPacer: ReadPacer }).readPacer;
    const background = await pacer.background(() =>
      Promise.allSettled(Array.from({ length: 150 }, (_, i) => get(h, i))),
    );
    const done = background.filter((r) => r.status === "fulfilled").length;
    expect(done).toBe(100);
    // The rest gave up at once, as throttled by poolsync's own pacing, naming the window (the timer comes back later).
    const refused = background.find((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(refused?.reason).toBeInstanceOf(ThrottledError);
    expect(String((refused?.reason as Error).message)).toMatch(/GetVMScaleSet3Min window/);
    // A reconcile's read is not held back: the other half is its.
    const foreground = await Promise.allSettled(Array.from({ length: 90 }, (_, i) => get(h, i)));
    expect(foreground.filter((r) => r.status === "rejected")).toEqual([]);
    expect(h.sim.control.stats().status429).toBe(0);
  });

  it("(control) without pacing the same reads earn 429s", async () => {
    // At real time: at 150× a loaded machine may take the window's three minutes to send 300 requests.
    h = await startHarness({
      sim: { ...world, throttling: true },
      env: { ...wide, POOLSYNC_PACING_ENABLED: "false" },
      simClock: true,
    });
    const results = await readAll(h);
    expect(h.sim.control.stats().status429).toBeGreaterThan(0);
    expect(results.some((r) => r.status === "rejected")).toBe(true);
  });
});
