import { describe, expect, it } from "vitest";
import { TimerStateTable } from "../../src/azure/timerStateTable";
import type { TimerState } from "../../src/core/ports";
import { freshTable } from "../support/freshTable";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const HOUR = 3_600_000;

describe("TimerStateTable on Azurite", () => {
  it("starts from scratch with no row, and reads back what the last run wrote", async () => {
    const timer = new TimerStateTable(await freshTable("timer"), () => NOW);
    expect(await timer.read()).toEqual({ paused: {}, cursor: "" });
    const state: TimerState = {
      paused: { "22222222-3333-4444-5555-666666666666": NOW + 60_000 },
      cursor: "%2fsubscriptions%2fx",
      resume: { group: "rg", nextLink: "https://arm.example/next" },
      lastRun: { at: NOW, listPages: 2, scaleSetGets: 3, instanceLists: 1, visited: 4 },
    };
    await timer.write(state);
    expect(await timer.read()).toEqual(state);
  });

  it("ignores a pause further off than ARM's longest Retry-After poolsync honours, and one already over", async () => {
    const table = await freshTable("timer");
    const timer = new TimerStateTable(table, () => NOW);
    await timer.write({ paused: { a: NOW + 7 * HOUR, b: NOW + 5 * HOUR, c: NOW - 1 }, cursor: "" });
    expect((await timer.read()).paused).toEqual({ b: NOW + 5 * HOUR });
  });

  it("keeps the longest pauses when there are more than a row holds", async () => {
    const timer = new TimerStateTable(await freshTable("timer"), () => NOW);
    const paused = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`sub-${i}`, NOW + 1_000 * (i + 1)]));
    await timer.write({ paused, cursor: "" });
    const read = (await timer.read()).paused;
    expect(Object.keys(read)).toHaveLength(256);
    expect(read["sub-299"]).toBe(NOW + 300_000);
    expect(read["sub-43"]).toBeUndefined();
  });

  it("reads a row written badly as a fresh start of its broken parts, not a stopped timer", async () => {
    const table = await freshTable("timer");
    await table.upsertEntity(
      {
        partitionKey: "~timer",
        rowKey: "state",
        paused: JSON.stringify({ "not a subscription!": NOW + 1, x: "soon", y: null }),
        cursor: "c".repeat(5_000),
        resume: "{",
        lastRun: "[]",
      },
      "Replace",
    );
    const state = await new TimerStateTable(table, () => NOW).read();
    expect(state).toEqual({ paused: {}, cursor: "c".repeat(1_024) });
  });
});
