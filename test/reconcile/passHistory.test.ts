import { describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import type { HistoryEntry, PassEvent } from "../../src/core/history";
import { passHistory } from "../../src/reconcile/passHistory";

/** A pass's typed events as its target's history: the routing and the entries (pure, over an in-memory history). */
describe("passHistory", () => {
  const TARGET =
    "/subscriptions/00000000-0000-0000-0000-00000000000b/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-h";
  const AT = Date.parse("2026-01-02T03:04:05.000Z");

  function sink(failAppend = false) {
    const committed: HistoryEntry[] = [];
    const appended: Array<[string, HistoryEntry]> = [];
    const log = memoryLogger();
    const events = passHistory(TARGET, {
      record: (e) => committed.push(e),
      history: {
        append: async (id, e) => {
          if (failAppend) throw new Error("table down");
          appended.push([id, e]);
        },
      },
      now: () => AT,
      log,
    });
    return { committed, appended, log, events };
  }

  it("a write goes into the pass's commit, its pools split into added and removed", () => {
    const s = sink();
    const write: PassEvent = {
      kind: "write",
      resourceId: `${TARGET}/virtualMachines/3`,
      resourceKind: "instance",
      ifMatch: "W/1",
      etag: "W/2",
      pools: ["present:/lb/pool-a", "absent:/lb/pool-b"],
      outcome: "ok",
      clientRequestId: "req-1",
    };
    s.events.emit(write);
    expect(s.appended).toEqual([]);
    expect(s.committed).toEqual([
      {
        at: "2026-01-02T03:04:05.000Z",
        kind: "write",
        resourceId: `${TARGET}/virtualMachines/3`,
        resourceKind: "instance",
        etagBefore: "W/1",
        etagAfter: "W/2",
        added: ["/lb/pool-a"],
        removed: ["/lb/pool-b"],
        outcome: "ok",
        clientRequestId: "req-1",
      },
    ]);
  });

  it("a failed or requeued end and a drift are appended at once, the drift at its own time", async () => {
    const s = sink();
    s.events.emit({ kind: "ended", result: "requeued", reason: "throttled: 429" });
    s.events.emit({
      kind: "drift",
      backendPoolId: "/lb/pool-a",
      ipConfiguration: "ipconfig1",
      drift: {
        at: "2026-01-02T03:00:00.000Z",
        by: { name: "autoscaler", id: "oid", appId: "app" },
        operation: "Microsoft.Compute/virtualMachineScaleSets/write",
        correlationId: "corr",
        source: "event",
        repairedAt: undefined,
        resourceKind: "model",
        resourceId: TARGET,
      },
    });
    await new Promise((r) => setImmediate(r));
    expect(s.committed).toEqual([]);
    expect(s.appended.map(([id, e]) => [id, e.kind, e.at])).toEqual([
      [TARGET, "failure", "2026-01-02T03:04:05.000Z"],
      [TARGET, "drift", "2026-01-02T03:00:00.000Z"],
    ]);
    expect(s.appended[0]![1]).toEqual({
      at: "2026-01-02T03:04:05.000Z",
      kind: "failure",
      result: "requeued",
      reason: "throttled: 429",
    });
    expect(s.appended[1]![1]).toMatchObject({ kind: "drift", repairedAt: null, by: { name: "autoscaler" } });
  });

  it("a history that cannot be written is logged and never fails the step", async () => {
    const s = sink(true);
    expect(() => s.events.emit({ kind: "ended", result: "failed", reason: "400" })).not.toThrow();
    await new Promise((r) => setImmediate(r));
    // (memoryLogger spreads the fields over the line, so the line's `event` field shows, not its name.)
    expect(s.log.lines).toEqual([{ level: "warn", event: "reconcile", targetId: TARGET, error: "table down" }]);
  });
});
