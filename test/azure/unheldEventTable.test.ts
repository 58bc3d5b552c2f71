import { describe, expect, it } from "vitest";
import { EVENTS_PARTITION, UNHELD_KEPT, UnheldEventTable } from "../../src/azure/unheldEventTable";
import { freshTable } from "../support/freshTable";

const event = (i: number) => ({
  at: `2026-12-02T10:00:${String(i % 60).padStart(2, "0")}Z`,
  resourceId: `/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm-${i}`,
  reason: `event ${i}`,
});

describe("UnheldEventTable on Azurite", () => {
  it("counts every event and keeps only the last few, newest first: the row does not grow", async () => {
    const table = await freshTable("unheld");
    const unheld = new UnheldEventTable(table);
    expect(await unheld.summary()).toEqual({ count: 0, recent: [] });
    for (let i = 0; i < UNHELD_KEPT + 3; i++) await unheld.record(event(i));
    const { count, recent } = await unheld.summary();
    expect(count).toBe(UNHELD_KEPT + 3);
    expect(recent).toHaveLength(UNHELD_KEPT);
    expect(recent[0]).toEqual(event(UNHELD_KEPT + 2));
    const row = await table.getEntity<{ recent: string }>(EVENTS_PARTITION, "unheld");
    expect(JSON.parse(row.recent)).toHaveLength(UNHELD_KEPT);
  });

  it("counts deliveries that race each other on top of one another", async () => {
    const table = await freshTable("unheld");
    await Promise.all([0, 1, 2].map((i) => new UnheldEventTable(table).record(event(i))));
    expect((await new UnheldEventTable(table).summary()).count).toBe(3);
  });

  it("keeps a made-up sender's long strings short, and reads planted items as none", async () => {
    const table = await freshTable("unheld");
    const unheld = new UnheldEventTable(table);
    await unheld.record({ at: "t", resourceId: "r".repeat(5_000), reason: "x".repeat(5_000) });
    expect((await unheld.summary()).recent[0]?.resourceId).toHaveLength(512);
    await table.upsertEntity({ partitionKey: EVENTS_PARTITION, rowKey: "unheld", count: 7, recent: '[{"at":1},"x"]' });
    expect(await unheld.summary()).toEqual({ count: 7, recent: [] });
  });
});
