import { odata } from "@azure/data-tables";
import { claimDebounce, emptyControl, type ControlState } from "../../core/control";
import type { EventCaller } from "../../core/eventCaller";
import type { EventNoted, EventRow, TargetEvents } from "../../core/targetPasses";
import type { NicRef, TargetRef, VmRef } from "../../core/resourceIds";
import { statusOf } from "../tableErrors";
import { staleColumns } from "./cacheRows";
import { TargetConflict, type TargetWrite } from "./commitTarget";
import { CONTROL_COLUMN, controlOf } from "./controlRow";
import {
  CONTROL_ROW,
  DECLARATION_ROWS,
  instanceRowKey,
  MODEL_ROW,
  nicRowKey,
  targetPartition,
  vmRowKey,
  writerRowKey,
} from "./rowKeys";
import type { TargetStore } from "./targetStore";

const rowKeyOf = (r: EventRow): string =>
  r.kind === "model"
    ? MODEL_ROW
    : r.kind === "instance"
      ? instanceRowKey(r.instanceId)
      : r.kind === "nic"
        ? nicRowKey(r.ref)
        : vmRowKey(r.ref);

const MAX_TRIES = 6;

/** ARM events over the targets table: one read, one transaction per event (see core/targetPasses.ts). */
export class StoreTargetEvents implements TargetEvents {
  constructor(
    private readonly store: TargetStore,
    private readonly owners: { ownerOf(resource: NicRef | VmRef): Promise<TargetRef | undefined> },
  ) {}

  ownerOf(resource: NicRef | VmRef): Promise<TargetRef | undefined> {
    return this.owners.ownerOf(resource);
  }

  invalidate(
    target: TargetRef,
    rows: readonly EventRow[],
    writer: { resourceId: string; caller: EventCaller } | undefined,
    reason: string,
    debounceMs: number,
  ): Promise<EventNoted> {
    const keys = rows.map(rowKeyOf);
    return this.noted(target, keys, debounceMs, (present, declared, now) => {
      // Declared: every named row is marked, a missing one too (the marker makes a concurrent create-only store of an
      // older read fail, as it must). Otherwise only what is cached: an event for a made-up ID makes no row.
      const marked = declared ? keys : keys.filter((k) => present.has(k));
      const writes: TargetWrite[] = marked.map((rowKey) => ({
        kind: "upsert",
        entity: { rowKey, ...staleColumns(reason, now) },
      }));
      if (writer && (declared || marked.length > 0))
        writes.push({
          kind: "upsert",
          entity: {
            rowKey: writerRowKey(writer.resourceId),
            caller: JSON.stringify(writer.caller).slice(0, 16_000),
            seenAt: now,
          },
        });
      return writes;
    });
  }

  forget(target: TargetRef, rows: readonly EventRow[] | "all", debounceMs: number): Promise<EventNoted> {
    const keys = rows === "all" ? [] : rows.map(rowKeyOf);
    return this.noted(
      target,
      keys,
      debounceMs,
      (present) =>
        rows === "all"
          ? [...present].filter((k) => k.startsWith("c|")).map((rowKey) => ({ kind: "delete" as const, rowKey }))
          : keys.filter((k) => present.has(k)).map((rowKey) => ({ kind: "delete" as const, rowKey })),
      rows === "all",
    );
  }

  /**
   * Reads the control row and the named rows (all cache rows with `allRows`), asks `writesFor` what to write, and
   * writes it with the debounce claim in one transaction; a lost race reads again.
   */
  private async noted(
    target: TargetRef,
    keys: readonly string[],
    debounceMs: number,
    writesFor: (present: Set<string>, declared: boolean, now: number) => TargetWrite[],
    allRows = false,
  ): Promise<EventNoted> {
    const pk = targetPartition(target);
    for (let attempt = 0; ; attempt++) {
      const read = await this.read(target, pk, keys, allRows);
      const now = this.store.now();
      const declared = read.declared;
      const writes = writesFor(read.present, declared, now);
      const claim = declared ? claimDebounce(read.control, now, debounceMs) : { claimed: false, state: undefined };
      const held = keys.some((k) => read.present.has(k)) || (allRows && read.present.size > 0);
      if (writes.length === 0 && !claim.state) return { held, declared, claimed: false };
      try {
        await this.store.commit(pk, writes, claim.state ? { state: claim.state, base: read.etag } : undefined);
        return { held, declared, claimed: claim.claimed };
      } catch (err) {
        if (!(err instanceof TargetConflict)) throw err;
        if (attempt + 1 >= MAX_TRIES) return { held, declared, claimed: declared, contended: true };
      }
    }
  }

  private async read(
    target: TargetRef,
    pk: string,
    keys: readonly string[],
    allRows: boolean,
  ): Promise<{ control: ControlState; etag: string | undefined; present: Set<string>; declared: boolean }> {
    const present = new Set<string>();
    let controlRow: (Record<string, unknown> & { etag: string }) | undefined;
    const filter = allRows
      ? odata`PartitionKey eq ${pk} and RowKey lt ${"d"}`
      : `${odata`PartitionKey eq ${pk}`} and (${[CONTROL_ROW, ...keys].map((k) => odata`RowKey eq ${k}`).join(" or ")})`;
    try {
      for await (const row of this.store.table.listEntities<Record<string, unknown>>({
        queryOptions: { filter, select: ["RowKey", CONTROL_COLUMN] },
      })) {
        if (row.rowKey === CONTROL_ROW) controlRow = row as typeof row & { etag: string };
        else present.add(row.rowKey ?? "");
      }
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    if (controlRow) {
      const c = controlOf(controlRow, this.store.now(), this.store.bounds, () => ({
        present: 0,
        absent: 0,
        byCaller: {},
      }));
      if (!c.problems.some((p) => p.startsWith("control row unreadable")))
        return {
          control: c.state,
          etag: controlRow.etag,
          present,
          declared: c.state.counts.present + c.state.counts.absent > 0,
        };
    }
    // No control row (a target no declaration reached since the upgrade) or an unreadable one: whether it is declared
    // is the partition's to say, read whole once; the claim then writes the rebuilt row.
    if (!controlRow && !(await this.anyDeclaration(pk)))
      return { control: emptyControl(), etag: undefined, present, declared: false };
    const snap = await this.store.readTarget(target);
    return { control: snap.control, etag: snap.controlEtag, present, declared: snap.declarations.length > 0 };
  }

  private async anyDeclaration(pk: string): Promise<boolean> {
    try {
      for await (const page of this.store.table
        .listEntities({
          queryOptions: {
            filter: odata`PartitionKey eq ${pk} and RowKey ge ${DECLARATION_ROWS.from} and RowKey lt ${DECLARATION_ROWS.to}`,
            select: ["RowKey"],
          },
        })
        .byPage({ maxPageSize: 1 }))
        return page.length > 0;
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    return false;
  }
}
