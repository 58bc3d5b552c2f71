import { describe, expect, it } from "vitest";
import type { Drift } from "../../src/core/drift";
import { historyEntryOf, poolsMoved } from "../../src/core/history";

const AT = "2026-12-01T10:00:00.000Z";

describe("history", () => {
  it("splits the pools a write moves into those added and those removed, keeping pool IDs with colons whole", () => {
    expect(poolsMoved(["present:/pools/a", "absent:/pools/b", "present:/x:y"])).toEqual({
      added: ["/pools/a", "/x:y"],
      removed: ["/pools/b"],
    });
    expect(poolsMoved([])).toEqual({ added: [], removed: [] });
  });

  it("keeps a write as the ETag it was made against and the one it got, with the pools it moved", () => {
    const entry = historyEntryOf(
      {
        kind: "write",
        resourceId: "/vmss/a",
        resourceKind: "model",
        ifMatch: 'W/"1"',
        etag: 'W/"2"',
        pools: ["present:/pools/a", "absent:/pools/b"],
        outcome: "ok",
        clientRequestId: "req-1",
      },
      AT,
    );
    expect(entry).toEqual({
      at: AT,
      kind: "write",
      resourceId: "/vmss/a",
      resourceKind: "model",
      etagBefore: 'W/"1"',
      etagAfter: 'W/"2"',
      added: ["/pools/a"],
      removed: ["/pools/b"],
      outcome: "ok",
      clientRequestId: "req-1",
    });
  });

  it("keeps a drift at the time it was seen, with who made it and null until repaired", () => {
    const drift: Drift = {
      at: "2026-12-01T09:59:00.000Z",
      by: { name: "bob", id: "oid-b", appId: "app-b" },
      operation: "Microsoft.Compute/virtualMachineScaleSets/write",
      correlationId: "corr",
      source: "event",
      repairedAt: undefined,
      resourceKind: "model",
      resourceId: "/vmss/a",
    };
    const entry = historyEntryOf({ kind: "drift", backendPoolId: "/pools/a", ipConfiguration: "", drift }, AT);
    expect(entry).toMatchObject({ at: drift.at, kind: "drift", by: drift.by, repairedAt: null, source: "event" });
    const repaired = historyEntryOf(
      { kind: "drift", backendPoolId: "/pools/a", ipConfiguration: "", drift: { ...drift, at: "", repairedAt: AT } },
      AT,
    );
    expect(repaired).toMatchObject({ at: AT, repairedAt: AT });
    // A row stored without a repair time reads back as "": still unrepaired.
    const stored = historyEntryOf(
      { kind: "drift", backendPoolId: "/pools/a", ipConfiguration: "", drift: { ...drift, repairedAt: "" } },
      AT,
    );
    expect(stored).toMatchObject({ repairedAt: null });
  });

  it("keeps a pass that ended unfinished as a failure with its reason", () => {
    expect(historyEntryOf({ kind: "ended", result: "requeued", reason: "throttled for 30 s" }, AT)).toEqual({
      at: AT,
      kind: "failure",
      result: "requeued",
      reason: "throttled for 30 s",
    });
  });
});
