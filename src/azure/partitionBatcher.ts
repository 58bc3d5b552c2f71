import type { TableClient, TableEntity, TransactionAction } from "@azure/data-tables";
import { statusOf } from "./tableErrors";

/**
 * Conditional updates of one partition asked for in the same turn of the event loop go to the Table in one
 * transaction (an entity group transaction: one round trip for up to 100 rows of a partition). A reconcile records
 * the outcome of each declaration it served, eight at a time: those rows share the scale set's partition, so N
 * declarations cost one round trip instead of N.
 *
 * A transaction is all or nothing: when one row lost its race (412, 404), every update of the group is sent again on
 * its own, so each caller still learns whether its own row was written, exactly as a lone update would tell it.
 */

/** The Table's limit on the operations of one transaction. */
const MAX_GROUP = 100;

interface Pending {
  entity: TableEntity;
  etag: string;
  done: (written: boolean) => void;
  fail: (err: unknown) => void;
}

const lostRace = (err: unknown) => statusOf(err) === 412 || statusOf(err) === 404;

export class PartitionBatcher {
  private readonly groups = new Map<string, Pending[]>();

  constructor(private readonly table: TableClient) {}

  /** A Merge on `etag`: true when written, false when the row changed or went since it was read. */
  mergeIfMatch(entity: TableEntity, etag: string): Promise<boolean> {
    return new Promise<boolean>((done, fail) => {
      const key = entity.partitionKey;
      let group = this.groups.get(key);
      // One row at most once per transaction (the Table refuses a group naming a row twice): a second update of the
      // same row starts a group of its own.
      if (!group || group.length >= MAX_GROUP || group.some((p) => p.entity.rowKey === entity.rowKey)) {
        group = [];
        const mine = group;
        this.groups.set(key, mine);
        setImmediate(() => {
          if (this.groups.get(key) === mine) this.groups.delete(key);
          void this.flush(mine);
        });
      }
      group.push({ entity, etag, done, fail });
    });
  }

  private async flush(group: Pending[]): Promise<void> {
    if (group.length === 1) return this.alone(group[0] as Pending);
    try {
      const actions: TransactionAction[] = group.map((p) => ["update", p.entity, "Merge", { etag: p.etag }]);
      await this.table.submitTransaction(actions);
      for (const p of group) p.done(true);
    } catch (err) {
      if (!lostRace(err)) {
        for (const p of group) p.fail(err);
        return;
      }
      await Promise.all(group.map((p) => this.alone(p)));
    }
  }

  private async alone(p: Pending): Promise<void> {
    try {
      await this.table.updateEntity(p.entity, "Merge", { etag: p.etag });
      p.done(true);
    } catch (err) {
      if (lostRace(err)) p.done(false);
      else p.fail(err);
    }
  }
}
