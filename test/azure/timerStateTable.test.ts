import { describe, expect, it } from "vitest";
import { TimerStateTable } from "../../src/azure/timerStateTable";
import type { TimerState } from "../../src/core/ports";
import { freshTable } from "../support/freshTable";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const HOUR = 3_600_000;

describe("TimerStateTable on Azurite", () => {
  it("starts from scratch with no row, and reads back what the last run wrote", async () => {
    const timer = new TimerStateTable(await freshTable("timer"), () => NOW);
    expect(await timer.read()).toEqual({ notBefore: 0, cursor: "" });
    const state: TimerState = {
      notBefore: NOW + 60_000,
      cursor: "%2fsubscriptions%2fx",
      resume: { group: "rg", nextLink: "https://arm.example/next" },
      lastRun: { at: NOW, listPages: 2, scaleSetGets: 3, instanceLists: 1, visited: 4 },
    };
    await timer.write(state);
    expect(await timer.read()).toEqual(state);
  });

  it("ignores a notBefore further off than ARM's longest Retry-After poolsync honours", async () => {
    const table = await freshTable("timer");
    const timer = new TimerStateTable(table, () => NOW);
    await timer.write({ notBefore: NOW + 7 * HOUR, cursor: "" });
    expect((await timer.read()).notBefore).toBe(0);
    await timer.write({ notBefore: NOW + 5 * HOUR, cursor: "" });
    expect((await timer.read()).notBefore).toBe(NOW + 5 * HOUR);
  });

  it("reads a row written badly as a fresh start of its broken parts, not a stopped timer", async () => {
    const table = await freshTable("timer");
    await table.upsertEntity(
      {
        partitionKey: "~timer",
        rowKey: "state",
        notBefore: "soon",
        cursor: "c".repeat(5_000),
        resume: "{",
        lastRun: "[]",
      },
      "Replace",
    );
    const state = await new TimerStateTable(table, () => NOW).read();
    expect(state).toEqual({ notBefore: 0, cursor: "c".repeat(1_024) });
  });
});
