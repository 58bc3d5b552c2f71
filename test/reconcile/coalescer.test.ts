import { describe, expect, it } from "vitest";
import { Coalescer } from "../../src/reconcile/coalescer";
import { mergeTriggers, type ReconcileTrigger } from "../../src/reconcile/vocabulary";

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe("Coalescer", () => {
  it("runs at most one per key and one pending; every later request joins the pending one with its input merged", async () => {
    const started: ReconcileTrigger[] = [];
    const first = gate();
    const aRunning = gate();
    const c = new Coalescer<ReconcileTrigger, number>(mergeTriggers);
    const work = async (t: ReconcileTrigger) => {
      started.push(t);
      const n = started.length;
      if (n === 1) {
        aRunning.open();
        await first.opened;
      }
      return n;
    };
    const a = c.run("k", { reason: "a", attempt: 0 }, work);
    await aRunning.opened;
    const b = c.run("k", { reason: "b", attempt: 0 }, work);
    const d = c.run("k", { reason: "d", attempt: 2, fresh: true }, work);
    const other = c.run("other", { reason: "x", attempt: 0 }, work);
    first.open();
    expect(await Promise.all([a, b, d, other])).toEqual([1, 3, 3, 2]);
    expect(started.map((t) => t.reason)).toEqual(["a", "x", "b; d"]);
    expect(started[2]).toEqual({ reason: "b; d", attempt: 2, fresh: true });
    await c.idle();
  });

  it("gathers before a fresh run so requests that arrive together share it", async () => {
    let runs = 0;
    const c = new Coalescer<ReconcileTrigger, number>(mergeTriggers, 20);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => c.run("k", { reason: `r${i}`, attempt: 0 }, async () => ++runs)),
    );
    expect(results).toEqual([1, 1, 1, 1, 1]);
  });

  it("starts a run that must not gather at once; a request arriving while it runs joins the next", async () => {
    const sleeps: number[] = [];
    const c = new Coalescer<ReconcileTrigger, string>(mergeTriggers, 60_000, (ms) => {
      sleeps.push(ms);
      return new Promise(() => undefined); // a gather never ends here: only a run that skips it can finish
    });
    const running = gate();
    const release = gate();
    const lead = c.run(
      "k",
      { reason: "lead", attempt: 0, leading: true },
      async (t) => {
        running.open();
        await release.opened;
        return t.reason;
      },
      { gather: false },
    );
    await running.opened;
    const next = c.run("k", { reason: "next", attempt: 0 }, async (t) => t.reason);
    release.open();
    await expect(lead).resolves.toBe("lead");
    await expect(next).resolves.toBe("next");
    expect(sleeps).toEqual([]);
  });

  it("lets the pending run go after a failed one, and reports the failure only to the failed run's callers", async () => {
    const c = new Coalescer<ReconcileTrigger, string>(mergeTriggers);
    const g = gate();
    const running = gate();
    const failing = c.run("k", { reason: "a", attempt: 0 }, async () => {
      running.open();
      await g.opened;
      throw new Error("boom");
    });
    await running.opened;
    const next = c.run("k", { reason: "b", attempt: 0 }, async (t) => t.reason);
    g.open();
    await expect(failing).rejects.toThrow("boom");
    await expect(next).resolves.toBe("b");
  });
});
