import { describe, expect, it } from "vitest";
import { declarationHistory, historyEntity } from "../../../src/azure/targets/historyRows";
import { HISTORY_ROWS, historyTimeOf } from "../../../src/azure/targets/rowKeys";
import type { Declaration } from "../../../src/core/declarations";
import { declared } from "../../support/targetPass";

/** Declared through the API by a named principal (the history records who). */
const declaration: Declaration = {
  ...declared("pool", "req-1"),
  declaredBy: { id: "principal-1", name: "deployer", via: "entra" },
};

describe("historyRows", () => {
  it("keys an entry by its own time, so a target's history reads newest first", () => {
    const at = "2026-12-02T10:00:00.000Z";
    const row = historyEntity("p", declarationHistory(declaration, at));
    expect(row.partitionKey).toBe("p");
    expect(row.rowKey >= HISTORY_ROWS.from && row.rowKey < HISTORY_ROWS.to).toBe(true);
    expect(historyTimeOf(row.rowKey)).toBe(Date.parse(at));
    expect(JSON.parse(row.entry as string)).toMatchObject({
      kind: "declaration",
      state: "present",
      requestId: "req-1",
    });
  });

  it("keys an entry with an unreadable time at now, and two entries of one instant apart", () => {
    const entry = { ...declarationHistory(declaration, "not a time") };
    const a = historyEntity("p", entry, 5_000);
    expect(historyTimeOf(a.rowKey)).toBe(5_000);
    expect(historyEntity("p", entry, 5_000).rowKey).not.toBe(a.rowKey);
  });

  it("records who declared what, and bounds an entry to what one column holds", () => {
    expect(declarationHistory(declaration, "t")).toEqual({
      at: "t",
      kind: "declaration",
      backendPoolId: declaration.backendPoolId,
      ipConfiguration: "",
      state: "present",
      by: { id: "principal-1", name: "deployer", via: "entra" },
      requestId: "req-1",
    });
    const huge = { ...declarationHistory(declaration, "t"), requestId: "x".repeat(50_000) };
    expect((historyEntity("p", huge).entry as string).length).toBe(30_000);
  });
});
