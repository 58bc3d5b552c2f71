import { describe, expect, it } from "vitest";
import type { HistoryEntry } from "../../src/core/history";
import { historyList } from "../../src/intake/historyHtml";
import { POOL_A, VMSS } from "./viewFixtures";

/** src/intake/historyHtml.ts: a target's last history entries on the status page, one line each, oldest first. */
const entries: HistoryEntry[] = [
  { at: "T3", kind: "failure", result: "failed", reason: "ARM answered 403 <AuthorizationFailed>" },
  {
    at: "T2",
    kind: "write",
    resourceId: VMSS,
    resourceKind: "model",
    etagBefore: '"1"',
    etagAfter: "",
    added: [POOL_A],
    removed: [],
    outcome: "412",
    clientRequestId: "c",
  },
  {
    at: "T1",
    kind: "declaration",
    backendPoolId: POOL_A,
    ipConfiguration: "",
    state: "present",
    by: { id: "oid-alice", via: "entra" },
    requestId: "r",
  },
];

describe("historyList", () => {
  it("lists the entries it is given (newest first) oldest first, with how many", () => {
    const text = String(historyList(entries));
    expect(text).toContain("History (last 3)");
    const order = ["T1", "T2", "T3"].map((t) => text.indexOf(`<span class="mono">${t}</span>`));
    expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
  });

  it("says each kind in a line of its own: who declared, what a write added and how it ended, why a pass failed", () => {
    const text = String(historyList(entries)).replace(/\s+/g, " ");
    expect(text).toContain("declared present a by oid-alice (entra)");
    expect(text).toContain(`wrote model <span title="${VMSS}">web</span> &quot;1&quot; → — +a · 412`);
    expect(text).toContain("failed: ARM answered 403 &lt;AuthorizationFailed&gt;");
  });

  it("shows nothing when the target has no history", () => {
    expect(historyList([])).toBe("");
    expect(historyList(undefined)).toBe("");
  });
});
