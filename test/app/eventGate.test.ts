import { describe, expect, it } from "vitest";
import { Gate } from "../../src/app/eventGate";

/** The gate alone: never more than its limit at once, first come first served, a failure frees its slot. */
describe("Gate", () => {
  it("runs at most `limit` at once, in the order they came, and a failing one lets the next in", async () => {
    const gate = new Gate(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const work = (i: number) =>
      gate.run(async () => {
        started.push(i);
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        if (i === 1) throw new Error("boom");
        return i;
      });
    const all = [0, 1, 2, 3, 4].map((i) => work(i).catch((e: Error) => e.message));
    const settle = () => new Promise((r) => setImmediate(r));
    await settle();
    expect(started).toEqual([0, 1]);
    releases.shift()!();
    releases.shift()!(); // 1 fails: its slot still passes on
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    while (releases.length > 0 || started.length < 5) {
      releases.shift()?.();
      await settle();
    }
    expect(await Promise.all(all)).toEqual([0, "boom", 2, 3, 4]);
    expect(most).toBe(2);
  });
});
