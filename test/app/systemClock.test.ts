import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/app/systemClock";

describe("the system clock", () => {
  it("tells the wall clock's time", () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it("ends a sleep at once when it is aborted, before or during it (a background timer that stops)", async () => {
    const already = new AbortController();
    already.abort();
    await systemClock.sleep(3_600_000, already.signal);
    const during = new AbortController();
    const sleeping = systemClock.sleep(3_600_000, during.signal);
    during.abort();
    await sleeping;
    // Reached here without waiting the hour: both sleeps ended on their abort.
    expect(during.signal.aborted).toBe(true);
  });

  it("lets a sleep with a signal end on its own time and forget the signal", async () => {
    const signal = new AbortController();
    await systemClock.sleep(0, signal.signal);
    signal.abort(); // after the sleep: nothing is listening any more, nothing throws
    expect(signal.signal.aborted).toBe(true);
  });
});
