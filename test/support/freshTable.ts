import { TableClient } from "@azure/data-tables";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/** A Table client on the suite's Azurite for a table of the test's own, created empty. */
export async function freshTable(prefix: string): Promise<TableClient> {
  const table = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName(prefix), {
    allowInsecureConnection: true,
  });
  await table.createTable();
  return table;
}
