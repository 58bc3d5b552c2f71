import { odata, type TableClient } from "@azure/data-tables";
import type { ControlBounds, ControlState } from "../../core/control";
import type { Logger } from "../../core/ports";
import type { TargetRef } from "../../core/resourceIds";
import { decodeKey } from "../../core/tableKeys";
import { CacheRowMac } from "../cacheRowMac";
import { statusOf } from "../tableErrors";
import { commitTarget, TargetConflict, type Committed, type TargetWrite } from "./commitTarget";
import { controlOf } from "./controlRow";
import { PassWrites, type ControlHandle, type TargetCommits } from "./passWrites";
import { readTarget, type TargetSnapshot } from "./readTarget";
import { CONTROL_ROW, targetPartition } from "./rowKeys";

export interface TargetStoreOptions {
  now: () => number;
  bounds: ControlBounds;
  mac: CacheRowMac;
  cacheEnabled: boolean;
  log: Logger;
}

/**
 * The targets table: one partition per target (see rowKeys.ts). Reads a target in one query, commits its changes in
 * entity-group transactions fenced by the control row's ETag, and changes the control row alone with a conditional
 * write, retried on a lost race. Rows that do not decode are logged here, once per read, and never reach a caller.
 */
export class TargetStore implements TargetCommits {
  constructor(
    readonly table: TableClient,
    private readonly o: TargetStoreOptions,
  ) {}

  get cacheEnabled(): boolean {
    return this.o.cacheEnabled;
  }

  get mac(): CacheRowMac {
    return this.o.mac;
  }

  get now(): () => number {
    return this.o.now;
  }

  async readTarget(ref: TargetRef): Promise<TargetSnapshot> {
    const snapshot = await readTarget(this.table, ref, this.o);
    for (const p of snapshot.problems)
      this.o.log.warn("storage.row-unusable", {
        targetId: ref.id,
        rowKey: p.rowKey.slice(0, 200),
        reason: p.reason.slice(0, 500),
        outcome: "left out (a cache row is a miss, a control row is rebuilt)",
      });
    return snapshot;
  }

  read(snapshot: TargetSnapshot): Promise<TargetSnapshot> {
    return this.readTarget(snapshot.ref);
  }

  commit(
    partitionKey: string,
    writes: readonly TargetWrite[],
    control?: { state: ControlState; base: string | undefined },
  ): Promise<Committed> {
    return commitTarget(this.table, partitionKey, writes, control);
  }

  get bounds(): ControlBounds {
    return this.o.bounds;
  }

  /** A pass's writes over `snapshot`, with the control row as `handle` holds it. */
  passWrites(snapshot: TargetSnapshot, handle: ControlHandle): PassWrites {
    return new PassWrites(this, snapshot, handle);
  }

  /** The control row alone (one point read); a missing or unreadable one as rebuilt from the declarations. */
  async readControl(ref: TargetRef): Promise<ControlHandle> {
    try {
      const row = await this.table.getEntity<Record<string, unknown>>(targetPartition(ref), CONTROL_ROW);
      const decoded = controlOf(row, this.o.now(), this.o.bounds, () => ({ present: 0, absent: 0, byCaller: {} }));
      // A row that does not decode needs its counts from the declarations: the whole partition, once.
      if (decoded.problems.some((p) => p.startsWith("control row unreadable"))) {
        const snap = await this.readTarget(ref);
        return { state: snap.control, etag: snap.controlEtag };
      }
      return { state: decoded.state, etag: row.etag };
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      // No control row yet: its counts come from whatever declarations the partition holds (an upgraded store).
      const snap = await this.readTarget(ref);
      return { state: snap.control, etag: snap.controlEtag };
    }
  }

  /**
   * Changes the control row alone: `change` answers the new state (undefined: nothing to write) and whatever the
   * caller needs of the decision. Read, change, conditional write; a lost race reads again. `known`: the row as this
   * process last saw it, tried first without a read.
   */
  async updateControl<T>(
    ref: TargetRef,
    change: (s: ControlState) => { state: ControlState | undefined; result: T },
    known?: ControlHandle,
    maxTries = 8,
  ): Promise<{ result: T; handle: ControlHandle }> {
    let handle = known ?? (await this.readControl(ref));
    for (let attempt = 0; ; attempt++) {
      const { state, result } = change(handle.state);
      if (!state) return { result, handle };
      try {
        const { control: etag } = await commitTarget(this.table, targetPartition(ref), [], {
          state,
          base: handle.etag,
        });
        return { result, handle: { state, etag } };
      } catch (err) {
        if (!(err instanceof TargetConflict) || attempt + 1 >= maxTries) throw err;
        handle = await this.readControl(ref);
      }
    }
  }

  /** Every target's control row, by target key: one scan of the control rows (the timer's, the status view's). */
  async listControls(): Promise<Map<string, ControlState>> {
    const out = new Map<string, ControlState>();
    const now = this.o.now();
    try {
      for await (const row of this.table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: odata`RowKey eq ${CONTROL_ROW}` },
      }))
        out.set(
          decodeKey(row.partitionKey ?? ""),
          controlOf(row, now, this.o.bounds, () => ({ present: 0, absent: 0, byCaller: {} })).state,
        );
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    return out;
  }

  /** Every target's attempt chain in progress, by target key. */
  async listAttempts(): Promise<Map<string, NonNullable<ControlState["attempt"]>>> {
    const out = new Map<string, NonNullable<ControlState["attempt"]>>();
    for (const [key, c] of await this.listControls()) if (c.attempt) out.set(key, c.attempt);
    return out;
  }

  /**
   * Every live declaration in the table, target by target, for the status view and the migration: one filtered
   * scan (a GET makes no writes; removal marks are left out).
   */
  async *scanDeclarations(): AsyncGenerator<Record<string, unknown> & { partitionKey: string; rowKey: string }> {
    try {
      for await (const row of this.table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: odata`RowKey ge ${"%"} and RowKey lt ${"&"}` },
      }))
        yield row as Record<string, unknown> & { partitionKey: string; rowKey: string };
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
  }
}
