import { odata } from "@azure/data-tables";
import { claimWindow, type ControlState, type WindowClaim } from "../../core/control";
import { capRefusal, recount, type Counted } from "../../core/declarationCap";
import { DeclarationContendedError, type StoredDeclaration } from "../../core/declarations";
import type { Declared, DeclaredResult, DeclareOutcome, WindowRequest } from "../../core/targetPasses";
import type { TargetRef } from "../../core/resourceIds";
import { statusOf } from "../tableErrors";
import { TargetConflict, type TargetWrite } from "./commitTarget";
import { controlOf } from "./controlRow";
import { declarationEntity, decodeDeclaration, outranks } from "./declarationRows";
import { declarationHistory, historyEntity } from "./historyRows";
import { CONTROL_ROW, declarationRowKey, targetPartition } from "./rowKeys";
import type { TargetStore } from "./targetStore";

/** Transactions one batch tries before it answers "contended" (other hosts declaring on the same target). */
const MAX_TRIES = 16;

/**
 * Stores declarations of one target in one transaction with its control row: each row created, replaced (newer) or
 * left (the same request, or an older one), the counts and the caps moved with them, a history entry each, and the
 * declare window claimed. Nothing about the target can change between the read and that write unseen (the control
 * row's ETag), so the caps hold exactly, and a pass that closed the window before this write does not read these
 * declarations while one that closes it after reads them all. One read, one write; a lost race reads again.
 * Long: one read and one conditional write of the partition, with the caps and the window decided between them on the
 * same snapshot.
 */
export async function declareTarget(
  store: TargetStore,
  ref: TargetRef,
  batch: readonly Declared[],
  window: WindowRequest | undefined,
  /** Called before the first declaration of a target not yet in the timer's index is stored. */
  index?: (ref: TargetRef) => Promise<void>,
  /** Only say what storing would answer (a dry run): nothing is written. */
  preview = false,
): Promise<DeclareOutcome> {
  const partitionKey = targetPartition(ref);
  const keys = [...new Set(batch.map((b) => declarationRowKey(b.declaration)))];
  for (let attempt = 0; ; attempt++) {
    const read = await readRows(store, ref, keys);
    const now = store.now();
    const at = new Date(now).toISOString();
    let control = read.control;
    const rows = new Map(read.rows);
    const writes = new Map<string, TargetWrite>();
    const history: TargetWrite[] = [];
    const results: DeclaredResult[] = [];
    let claimWanted = false;
    for (const { declaration: d } of batch) {
      const key = declarationRowKey(d);
      const existing = rows.get(key);
      const held = existing?.d;
      if (held && held.requestId === d.requestId) {
        results.push({ result: "unchanged", stored: held });
        if (!existing.removed && held.outcome.kind !== "applied") claimWanted = true;
        continue;
      }
      if (held && outranks(held, d, now)) {
        results.push({ result: "older", stored: held });
        continue;
      }
      const before: Counted | undefined =
        held && !existing.removed ? { state: held.state, callerId: held.declaredBy.id } : undefined;
      const refused = capRefusal(control.counts, before, { state: d.state, callerId: d.declaredBy.id });
      if (refused) {
        results.push({ result: "refused", ...refused });
        continue;
      }
      control = { ...control, counts: recount(control.counts, before, { state: d.state, callerId: d.declaredBy.id }) };
      const entity = declarationEntity(partitionKey, d, at) as unknown as Record<string, unknown> & { rowKey: string };
      // Against the row as stored (a second declaration of one key in the batch replaces the first's write).
      const base = read.rows.get(key)?.etag;
      writes.set(key, base ? { kind: "replace", entity, base } : { kind: "create", entity });
      const stored: StoredDeclaration = { ...d, outcome: { kind: "pending", at }, attempts: 0, rowEtag: "" };
      history.push({ kind: "create", entity: historyEntity(partitionKey, declarationHistory(d, at), now) });
      rows.set(key, { d: stored, etag: existing?.etag ?? "", removed: false });
      // Over a removal mark nothing was declared: the caller created this one.
      results.push({ result: before ? "updated" : "created", stored });
      claimWanted = true;
    }
    let claim: WindowClaim | undefined;
    if (writes.size > 0) control = { ...control, seq: control.seq + 1 };
    if (claimWanted && window) {
      const c = claimWindow(control, batch[0]?.claimant ?? "", now, window);
      claim = c.claim;
      if (c.state) control = c.state;
    }
    if (preview || (control === read.control && writes.size === 0)) return { results, claim };
    if (control.indexedDueAt === 0 && index) {
      // The timer's index learns of the target before its first declaration is stored: an index row whose target
      // ends up without one costs the timer one look.
      await index(ref);
      control = { ...control, indexedDueAt: now };
    }
    try {
      const committed = await store.commit(partitionKey, [...writes.values(), ...history], {
        state: control,
        base: read.etag,
      });
      for (const r of results)
        if (r.result === "created" || r.result === "updated")
          r.stored.rowEtag = committed.rows.get(declarationRowKey(r.stored)) ?? "";
      return { results, claim };
    } catch (err) {
      if (!(err instanceof TargetConflict)) throw err;
      if (attempt + 1 >= MAX_TRIES)
        throw new DeclarationContendedError(`declarations of ${ref.id} kept changing under us; try again`);
      // Others declared on the same target meanwhile: back off, at random and longer each time (up to half a second),
      // before reading again, so that contenders spread out instead of colliding again.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * Math.min(500, 10 * 2 ** attempt))));
    }
  }
}

interface RowRead {
  /** undefined: a row that does not decode (replaced on its ETag as if there were none). */
  d: StoredDeclaration | undefined;
  etag: string;
  removed: boolean;
}

/** Equalities per Table query: a filter may hold 15 comparisons, one is the partition's. */
const KEYS_PER_QUERY = 14;

/** The control row and the rows of the batch's keys, by one query (point reads, or'ed). */
async function readRows(
  store: TargetStore,
  ref: TargetRef,
  keys: readonly string[],
): Promise<{ control: ControlState; etag: string | undefined; rows: Map<string, RowRead> }> {
  const partitionKey = targetPartition(ref);
  const now = store.now();
  const wanted = [CONTROL_ROW, ...keys];
  const rows = new Map<string, RowRead>();
  let controlRow: (Record<string, unknown> & { etag: string }) | undefined;
  for (let i = 0; i < wanted.length; i += KEYS_PER_QUERY) {
    const part = wanted.slice(i, i + KEYS_PER_QUERY);
    const filter = `${odata`PartitionKey eq ${partitionKey}`} and (${part.map((k) => odata`RowKey eq ${k}`).join(" or ")})`;
    try {
      for await (const row of store.table.listEntities<Record<string, unknown>>({ queryOptions: { filter } })) {
        const rowKey = row.rowKey ?? "";
        if (rowKey === CONTROL_ROW) {
          controlRow = row as typeof row & { etag: string };
          continue;
        }
        const decoded = decodeDeclaration(row, now);
        rows.set(rowKey, {
          d: decoded.ok ? decoded.declaration : undefined,
          etag: row.etag ?? "",
          removed: decoded.ok && decoded.removedAt !== undefined,
        });
      }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
  }
  const control = controlRow ? controlOf(controlRow, now, store.bounds, emptyCounts) : undefined;
  if (control && !control.problems.some((p) => p.startsWith("control row unreadable")))
    return { control: control.state, etag: controlRow?.etag, rows };
  // Missing (a new target, or one stored by an earlier version) or unreadable: its counts come from every declaration
  // of the partition, read once; the write that follows stores the rebuilt row.
  const snap = await store.readTarget(ref);
  return { control: snap.control, etag: snap.controlEtag, rows };
}

const emptyCounts = () => ({ present: 0, absent: 0, byCaller: {} });
