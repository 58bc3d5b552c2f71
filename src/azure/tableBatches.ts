/** Azure Tables takes at most 100 operations in one entity-group transaction. */
export const TABLE_BATCH_MAX = 100;

/** `items` in runs of at most one transaction's size, in order. */
export function transactionBatches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += TABLE_BATCH_MAX) out.push(items.slice(i, i + TABLE_BATCH_MAX));
  return out;
}
