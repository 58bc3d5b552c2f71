import type { TableClient, TableEntity, TransactionAction, UpdateMode } from "@azure/data-tables";

/**
 * Writes to one partition asked for in the same turn of the event loop go to the Table in one transaction (an entity
 * group transaction: one round trip for up to 100 rows of a partition). A reconcile records the outcome of each
 * declaration it served eight at a time, marks its instances' cache rows before writing them, stores what it listed:
 * rows that share the scale set's partition, so N of them cost one round trip instead of N.
 *
 * A transaction is all or nothing: when any write of a group fails (a row lost its race: 412, 409, 404), every write
 * of the group is sent again on its own, so each caller gets exactly the answer or the error a lone write would
 * have given it. Writes to one row in the same turn are never in one group (the Table refuses that): they go in
 * groups of their own, as unordered as two concurrent requests always were.
 */

/** The Table's limit on the operations of one transaction. */
const MAX_GROUP = 100;

/** One write, as a transaction action; its answer is the row's new ETag. */
export type PartitionWrite =
  | { kind: "create"; entity: TableEntity }
  | { kind: "update"; entity: TableEntity; mode: UpdateMode; etag: string }
  | { kind: "upsert"; entity: TableEntity; mode: UpdateMode };

interface Pending {
  write: PartitionWrite;
  done: (etag: string | undefined) => void;
  fail: (err: unknown) => void;
}

const actionOf = (w: PartitionWrite): TransactionAction =>
  w.kind === "create"
    ? ["create", w.entity]
    : w.kind === "update"
      ? ["update", w.entity, w.mode, { etag: w.etag }]
      : ["upsert", w.entity, w.mode];

export class PartitionBatcher {
  private readonly groups = new Map<string, Pending[]>();

  constructor(private readonly table: TableClient) {}

  /** The row's new ETag; the Table's error as a lone write would have thrown it. */
  write(write: PartitionWrite): Promise<string | undefined> {
    return new Promise<string | undefined>((done, fail) => {
      const key = write.entity.partitionKey;
      let group = this.groups.get(key);
      if (!group || group.length >= MAX_GROUP || group.some((p) => p.write.entity.rowKey === write.entity.rowKey)) {
        const mine: Pending[] = [];
        group = mine;
        this.groups.set(key, mine);
        setImmediate(() => {
          if (this.groups.get(key) === mine) this.groups.delete(key);
          void this.flush(mine);
        });
      }
      group.push({ write, done, fail });
    });
  }

  /** A Merge on `etag`: true when written, false when the row changed or went since it was read. */
  async mergeIfMatch(entity: TableEntity, etag: string): Promise<boolean> {
    try {
      await this.write({ kind: "update", entity, mode: "Merge", etag });
      return true;
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 412 || status === 404) return false;
      throw err;
    }
  }

  private async flush(group: Pending[]): Promise<void> {
    if (group.length === 1) return this.alone(group[0] as Pending);
    let answer;
    try {
      answer = await this.table.submitTransaction(group.map((p) => actionOf(p.write)));
    } catch {
      await Promise.all(group.map((p) => this.alone(p)));
      return;
    }
    // Sub-responses come in the order of the actions (a merge's names no row key to look it up by).
    group.forEach((p, i) => p.done(answer.subResponses[i]?.etag));
  }

  private async alone(p: Pending): Promise<void> {
    const w = p.write;
    try {
      const answer =
        w.kind === "create"
          ? await this.table.createEntity(w.entity)
          : w.kind === "update"
            ? await this.table.updateEntity(w.entity, w.mode, { etag: w.etag })
            : await this.table.upsertEntity(w.entity, w.mode);
      p.done(answer.etag);
    } catch (err) {
      p.fail(err);
    }
  }
}
