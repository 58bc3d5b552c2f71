import type { TableClient } from "@azure/data-tables";
import { beforeAll, describe, expect, it } from "vitest";
import { statusOf, unless404 } from "../../src/azure/tableErrors";
import { freshTable } from "../support/freshTable";

let table: TableClient;
beforeAll(async () => {
  table = await freshTable("errs");
});

describe("tableErrors against Azurite", () => {
  it("statusOf reads the HTTP status of a failed Table call, and none from a call that never got an answer", async () => {
    const missing = await table.getEntity("p", "absent").catch((e: unknown) => e);
    expect(statusOf(missing)).toBe(404);
    expect(statusOf(new Error("socket hang up"))).toBeUndefined();
    expect(statusOf(undefined)).toBeUndefined();
  });

  it("unless404 takes a delete of a row already gone as done", async () => {
    await expect(unless404(() => table.deleteEntity("p", "absent"))).resolves.toBeUndefined();
  });

  it("unless404 passes any other failure on", async () => {
    await table.createEntity({ partitionKey: "p", rowKey: "r" });
    const conflict = unless404(() => table.createEntity({ partitionKey: "p", rowKey: "r" }));
    await expect(conflict).rejects.toMatchObject({ statusCode: 409 });
  });
});
