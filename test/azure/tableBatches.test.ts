import { describe, expect, it } from "vitest";
import { TABLE_BATCH_MAX, transactionBatches } from "../../src/azure/tableBatches";

describe("transactionBatches", () => {
  it("splits items into runs no longer than one Table transaction takes, keeping their order", () => {
    const items = Array.from({ length: 2 * TABLE_BATCH_MAX + 1 }, (_, i) => i);
    const batches = transactionBatches(items);
    expect(batches.map((b) => b.length)).toEqual([TABLE_BATCH_MAX, TABLE_BATCH_MAX, 1]);
    expect(batches.flat()).toEqual(items);
  });

  it("is the Table service's limit of 100 operations, and gives no batch for no items", () => {
    expect(TABLE_BATCH_MAX).toBe(100);
    expect(transactionBatches([])).toEqual([]);
  });
});
