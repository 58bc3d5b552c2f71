import type { TableClient } from "@azure/data-tables";
import { statusOf } from "./tableErrors";

/**
 * The timer's full count of the ETag cache, one row in the cache table's "~census" partition: a status view over a
 * cache larger than it scans shows these figures (with their time) instead of counting on every GET. The row holds
 * JSON; its reader checks it (storage content is input).
 */

const PARTITION = "~census";
const ROW_KEY = "cache";

export class CensusSummaryTable {
  constructor(readonly table: TableClient) {}

  async save(at: number, census: object): Promise<void> {
    await this.table.upsertEntity(
      { partitionKey: PARTITION, rowKey: ROW_KEY, at, census: JSON.stringify(census) },
      "Replace",
    );
  }

  /** What was saved, unchecked; undefined when nothing was, or the row is not JSON. */
  async read(): Promise<{ at: number; census: unknown } | undefined> {
    let row: { at?: number; census?: string };
    try {
      row = await this.table.getEntity<{ at?: number; census?: string }>(PARTITION, ROW_KEY);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
    try {
      return { at: Number(row.at), census: JSON.parse(row.census ?? "") as unknown };
    } catch {
      return undefined;
    }
  }
}
