import { afterEach, describe, expect, it } from "vitest";
import { HISTORY_MAX_AGE_MS, HISTORY_MAX_ENTRIES, type HistoryEntry } from "../../src/core/history";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";

/**
 * The timer's history prune over Azurite: each target keeps its newest HISTORY_MAX_ENTRIES entries younger than
 * HISTORY_MAX_AGE_MS; the rest go, in transactions of at most 100 (more than 100 doomed here, so several).
 */
describe("history pruning", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  const entry = (at: number, i: number): HistoryEntry => ({
    at: new Date(at).toISOString(),
    kind: "declaration",
    backendPoolId: DEMO.poolId,
    ipConfiguration: "",
    state: i % 2 ? "absent" : "present",
    by: { id: "prune-test", via: "queue" },
    requestId: `prune-${i}`,
  });

  it("keeps the newest entries within the bound and removes the rest in several transactions", async () => {
    const clock = manualClock();
    h = await startHarness({ clock });
    const now = clock.now();
    // 150 too old, then 260 young ones, oldest first: 150 + 60 go.
    const old = Array.from({ length: 150 }, (_, i) => entry(now - HISTORY_MAX_AGE_MS - 60_000 + i, i));
    const young = Array.from({ length: 260 }, (_, i) => entry(now - 260_000 + i * 1000, 150 + i));
    await h.services.history.appendAll!(DEMO.scaleSetId, [...old, ...young]);

    expect(await h.services.history.prune(now)).toBe(150 + 60);
    const page = await h.services.history.page(DEMO.scaleSetId, 500);
    expect(page.entries).toHaveLength(HISTORY_MAX_ENTRIES);
    const requestIds = page.entries.map((e) => (e.kind === "declaration" ? e.requestId : ""));
    expect(requestIds[0]).toBe("prune-409");
    expect(requestIds.at(-1)).toBe(`prune-${410 - HISTORY_MAX_ENTRIES}`);
    expect(await h.services.history.prune(now)).toBe(0);
  }, 120_000);
});
