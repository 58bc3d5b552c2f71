import { TableClient } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { testStorageConnectionString } from "../../devkit/storage";
import { BUDGETS_PARTITION, SharedBudgetTable } from "../../src/azure/sharedBudgetTable";
import { freshTable } from "../support/freshTable";

/**
 * The row every host reserves its write budget from, on Azurite: writes are conditional on the row's ETag, so only one
 * of two hosts that read the same row wins; and what is stored is read as input, never as more budget than a full
 * bucket or window, nor as a budget closed for ever.
 */

const SUB = "00000000-aaaa-4bbb-8ccc-000000000045";
const NOW = Date.parse("2026-12-02T10:00:00Z");
const now = () => NOW;

/** Another host's client on the same table: its own Table client, the same rows. */
const otherHost = (table: TableClient) =>
  new SharedBudgetTable(
    TableClient.fromConnectionString(testStorageConnectionString(), table.tableName, { allowInsecureConnection: true }),
    now,
  );

const row = (tokens: number) => ({
  buckets: { arm: { tokens, at: NOW } },
  windows: { "vm-sub|3Min": [[NOW - 1_000, 3]] as Array<[number, number]> },
  grants: { "host-a": { until: NOW + 5_000, tokens: { arm: 3, "vm-sub": 3 } } },
});

describe("the shared write budget row (Table Storage)", () => {
  it("reads a subscription with no row as full budgets and no ETag, so the first write creates it", async () => {
    const store = new SharedBudgetTable(await freshTable("budgets"), now);
    expect(await store.read(SUB)).toEqual({ buckets: {}, windows: {}, grants: {}, etag: undefined });
  });

  it("lets only one of two hosts that read the same row write it", async () => {
    const table = await freshTable("budgets");
    const a = new SharedBudgetTable(table, now);
    const b = otherHost(table);
    // Both found no row: the first create wins, the second is told so instead of overwriting it.
    const created = await a.write(SUB, row(170), undefined);
    expect(created).toEqual(expect.any(String));
    expect(await b.write(SUB, row(160), undefined)).toBe(false);

    const seen = await b.read(SUB);
    expect(seen).toEqual({ ...row(170), etag: created });
    // b writes on what it read; a, still holding the first ETag, loses.
    expect(await b.write(SUB, row(150), seen.etag)).toEqual(expect.any(String));
    expect(await a.write(SUB, row(140), created as string)).toBe(false);
    expect((await a.read(SUB)).buckets.arm?.tokens).toBe(150);
  });

  it("reads a row that claims more than a full budget, or time far ahead, as what it can hold", async () => {
    const table = await freshTable("budgets");
    const ahead = NOW + 10 * 60_000;
    await table.createEntity({
      partitionKey: BUDGETS_PARTITION,
      rowKey: SUB,
      // A bucket stamped ten minutes ahead would stay empty that long: read as absent (full).
      buckets: JSON.stringify({ arm: { tokens: -180, at: ahead } }),
      windows: JSON.stringify({
        "vm-sub|3Min": [[NOW - 1_000, 3], [NOW - 900, 1_000_000], [ahead, 5], [NOW - 800, -4], "junk"],
        "nrp|5Min": "not slots",
      }),
      grants: JSON.stringify({
        "host-a": { until: NOW + 5_000, tokens: { arm: 3, "vm-sub": 1_000_000, nrp: -2 } },
        "host-b": { until: ahead, tokens: { arm: 3 } },
        "host-c": "junk",
      }),
    });
    expect(await new SharedBudgetTable(table, now).read(SUB)).toEqual({
      buckets: {},
      windows: { "vm-sub|3Min": [[NOW - 1_000, 3]] },
      grants: { "host-a": { until: NOW + 5_000, tokens: { arm: 3 } } },
      etag: expect.any(String),
    });
  });

  it("reads a row of unreadable text, or written before the windows were shared, as empty budgets", async () => {
    const table = await freshTable("budgets");
    await table.createEntity({ partitionKey: BUDGETS_PARTITION, rowKey: SUB, buckets: "{", grants: "[1,2]" });
    const got = await new SharedBudgetTable(table, now).read(SUB);
    expect(got).toEqual({ buckets: {}, windows: {}, grants: {}, etag: expect.any(String) });
  });
});
