import type { TableClient, TransactionAction } from "@azure/data-tables";
import type { ControlState } from "../../core/control";
import { statusOf } from "../tableErrors";
import { controlEntity } from "./controlRow";
import { TABLE_BATCH_MAX } from "../tableBatches";

/**
 * One change to a target's partition, as a transaction action. `base`: the row's Table ETag as read (its write loses
 * to any change since); undefined on a create; "*" for a merge over whatever is there.
 */
export type TargetWrite =
  | { kind: "create"; entity: Record<string, unknown> & { rowKey: string } }
  | { kind: "merge" | "replace"; entity: Record<string, unknown> & { rowKey: string }; base: string }
  | { kind: "upsert"; entity: Record<string, unknown> & { rowKey: string } }
  /**
   * `base` given: deleted only while the row is as read, alone (a transaction's delete takes no condition); without:
   * deleted whatever it holds, in the transaction.
   */
  | { kind: "delete"; rowKey: string; base?: string };

/** The control row's change that goes with the writes: its state after, and its ETag before (undefined: create). */
export interface ControlWrite {
  state: ControlState;
  base: string | undefined;
}

/** A transaction lost a race: a row it was conditional on changed (412), appeared (409) or went (404). */
export class TargetConflict extends Error {
  override name = "TargetConflict";
}

type Entity = Record<string, unknown> & { partitionKey: string; rowKey: string };

function actionOf(partitionKey: string, w: TargetWrite): TransactionAction {
  if (w.kind === "delete") return ["delete", { partitionKey, rowKey: w.rowKey }];
  const entity: Entity = { ...w.entity, partitionKey };
  if (w.kind === "create") return ["create", entity];
  if (w.kind === "upsert") return ["upsert", entity, "Merge"];
  return ["update", entity, w.kind === "merge" ? "Merge" : "Replace", { etag: w.base }];
}

const rowKeyOf = (w: TargetWrite) => (w.kind === "delete" ? w.rowKey : w.entity.rowKey);

/** The rows' new Table ETags after a commit, by row key; the control row's as `control`. */
export interface Committed {
  control: string | undefined;
  rows: Map<string, string | undefined>;
}

/**
 * Writes a target's rows in entity-group transactions: the control row and the last 99 writes in one (all or
 * nothing: the control row's If-Match fences them), the ones before them in transactions of 100. Throws
 * TargetConflict when a condition failed.
 */
export async function commitTarget(
  table: TableClient,
  partitionKey: string,
  writes: readonly TargetWrite[],
  control?: ControlWrite,
): Promise<Committed> {
  const seen = new Set<string>();
  for (const w of writes) {
    const k = rowKeyOf(w);
    if (seen.has(k)) throw new Error(`commitTarget: two writes to row ${k} in one commit`);
    seen.add(k);
  }
  const row = control ? (controlEntity(partitionKey, control.state) as Entity) : undefined;
  const controlAction: TransactionAction[] =
    control && row
      ? [control.base === undefined ? ["create", row] : ["update", row, "Replace", { etag: control.base }]]
      : [];
  const conditionalDeletes = writes.filter(
    (w): w is Extract<TargetWrite, { kind: "delete" }> => w.kind === "delete" && w.base !== undefined,
  );
  const batched = writes.filter((w) => !(w.kind === "delete" && w.base !== undefined));
  const actions = batched.map((w) => actionOf(partitionKey, w));
  const keys = batched.map(rowKeyOf);
  const room = TABLE_BATCH_MAX - controlAction.length;
  const spilled = actions.length > room ? actions.length - room : 0;
  const rows = new Map<string, string | undefined>();
  try {
    for (const d of conditionalDeletes) await table.deleteEntity(partitionKey, d.rowKey, { etag: d.base });
    for (let i = 0; i < spilled; i += TABLE_BATCH_MAX) {
      const end = Math.min(spilled, i + TABLE_BATCH_MAX);
      const answer = await submit(table, actions.slice(i, end));
      answer.forEach((etag, j) => rows.set(keys[i + j] as string, etag));
    }
    const last = [...controlAction, ...actions.slice(spilled)];
    if (last.length === 0) return { control: undefined, rows };
    const answer = await submit(table, last);
    answer.slice(controlAction.length).forEach((etag, j) => rows.set(keys[spilled + j] as string, etag));
    return { control: controlAction.length > 0 ? answer[0] : undefined, rows };
  } catch (err) {
    const status = statusOf(err);
    if (status === 412 || status === 409 || status === 404) throw new TargetConflict(String((err as Error).message));
    throw err;
  }
}

/** One transaction (or one lone write: the Table refuses nothing but charges less); the rows' new ETags. */
async function submit(table: TableClient, actions: TransactionAction[]): Promise<Array<string | undefined>> {
  if (actions.length === 1) return [await alone(table, actions[0] as TransactionAction)];
  const answer = await table.submitTransaction(actions);
  return actions.map((_, i) => answer.subResponses[i]?.etag);
}

async function alone(table: TableClient, a: TransactionAction): Promise<string | undefined> {
  switch (a[0]) {
    case "create":
      return (await table.createEntity(a[1])).etag;
    case "delete":
      await table.deleteEntity(a[1].partitionKey, a[1].rowKey);
      return undefined;
    case "upsert":
      return (await table.upsertEntity(a[1], a[2])).etag;
    case "update":
      return (await table.updateEntity(a[1], a[2], a[3])).etag;
  }
}
