import { describe, expect, it } from "vitest";
import { SlidingWindow } from "../../src/core/slidingWindow";
import { plannable } from "../../src/core/armBudgets";

const MIN = 60_000;
/** CRP's published instance-write window (`PutVM3Min`, 240). */
const spec = { size: 240, windowMs: 3 * MIN };

describe("a budget over a window, counted as a sliding window", () => {
  it("lets the window's size through at once and the next request only when the first has aged out", () => {
    const w = new SlidingWindow(spec);
    for (let i = 0; i < 240; i++) {
      expect(w.waitMs(i * 100)).toBe(0);
      w.add(i * 100);
    }
    // The first request's slot (3 s) ends at 3 s; it counts for the window and the margin (1 s + 1.8 s) after that.
    const wait = w.waitMs(24_000);
    expect(wait).toBe(3_000 + 3 * MIN + 2_800 - 24_000);
    expect(w.waitMs(24_000 + wait)).toBe(0);
    expect(w.count(24_000 + wait)).toBeLessThan(240);
  });

  it("no fixed window of the same length, whatever its phase, sees more than the size (random arrivals, admitted by the count)", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const w = new SlidingWindow(spec);
    const sent: number[] = [];
    let t = 0;
    while (t < 40 * MIN) {
      // Bursts and lulls: sometimes 50 requests at once, sometimes one every few seconds.
      const burst = random() < 0.1 ? 50 : 1;
      for (let i = 0; i < burst; i++) {
        const wait = w.waitMs(t);
        if (wait === 0) {
          w.add(t);
          sent.push(t);
        } else t += Math.min(wait, 5_000);
      }
      t += Math.floor(random() * 4_000);
    }
    expect(sent.length).toBeGreaterThan(3 * 240);
    for (let phase = 0; phase < spec.windowMs; phase += 1_000) {
      for (let start = phase; start < t; start += spec.windowMs) {
        const inWindow = sent.filter((x) => x >= start && x < start + spec.windowMs).length;
        expect(inWindow).toBeLessThanOrEqual(240);
      }
    }
  });

  it("counts what the server says others spent as spent now: it ages out no sooner than the window that holds it", () => {
    const w = new SlidingWindow(spec);
    w.add(0, 10);
    // The server says 40 are left: 200 counted, 190 of them not ours.
    w.learnRemaining(1_000, 40);
    expect(w.count(1_000)).toBe(200);
    expect(w.waitMs(1_000, 41)).toBeGreaterThan(3 * MIN);
    // A figure that says less than we count changes nothing (ours may not have reached it yet).
    w.learnRemaining(2_000, 239);
    expect(w.count(2_000)).toBe(200);
  });

  it("plans on a little less than the size: the samples show counts three below it", () => {
    expect(plannable(spec)).toBe(235);
    expect(plannable({ size: 180, windowMs: 3 * MIN })).toBe(176);
    expect(plannable({ size: 1_000, windowMs: 5 * MIN })).toBe(980);
  });

  it("travels as slot counts (a row every host shares) and takes a reservation back from its slot", () => {
    const a = new SlidingWindow(spec);
    a.add(10_000, 5);
    a.add(20_000, 3);
    const b = new SlidingWindow(spec);
    b.load(a.entries(20_000), 20_000);
    expect(b.count(20_000)).toBe(8);
    b.remove(20_000, 2);
    expect(b.count(20_000)).toBe(6);
    b.remove(20_000, 9);
    expect(b.count(20_000)).toBe(5);
    expect(b.empty(10 * MIN)).toBe(true);
  });
});
