import { describe, expect, it } from "vitest";
import { ContendedWakes } from "../../src/reconcile/contendedWakes";

describe("ContendedWakes", () => {
  it("covers a target until its window ends, whatever the case of its ID", () => {
    const w = new ContendedWakes();
    expect(w.covered("/A/b", 0)).toBe(false);
    w.noteWoken("/A/b", 1_000, 5_000);
    expect(w.covered("/a/B", 5_999)).toBe(true);
    expect(w.covered("/a/b", 6_000)).toBe(false);
  });

  it("stays within its size, forgetting ended windows before open ones", () => {
    const w = new ContendedWakes(2);
    w.noteWoken("ended", 0, 10);
    w.noteWoken("open", 0, 1_000);
    w.noteWoken("new", 100, 1_000);
    expect([w.covered("ended", 5), w.covered("open", 100), w.covered("new", 100)]).toEqual([false, true, true]);
    // All open: the oldest goes, the newest is kept.
    w.noteWoken("newer", 200, 1_000);
    expect([w.covered("open", 200), w.covered("new", 200), w.covered("newer", 200)]).toEqual([false, true, true]);
  });
});
