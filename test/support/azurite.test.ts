import { describe, expect, it } from "vitest";
import { TableClient } from "@azure/data-tables";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

describe("test Azurite", () => {
  it("answers table writes and reads", async () => {
    const table = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("t"), {
      allowInsecureConnection: true,
    });
    await table.createTable();
    await table.createEntity({ partitionKey: "p", rowKey: "r", value: 42 });
    const got = await table.getEntity<{ value: number }>("p", "r");
    expect(got.value).toBe(42);
  });
});
