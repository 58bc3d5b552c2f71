import type { TableClient } from "@azure/data-tables";
import type { LeaseTake, ReconcileLeases } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { cachePartition } from "./cacheKeys";
import { statusOf } from "./tableErrors";

/**
 * Reconcile leases, one row per scale set in the cache table's "~leases" partition (apart from the scale set's cache
 * rows, whose Table ETags a running reconcile stores against). Every change is conditional on the row's ETag, so two
 * hosts never both believe they hold it, and a request for another pass is never lost between the holder's last
 * read and its release: the release's conditional write fails, and it reads the request. A released row stays, with
 * no holder and what the last holder handed over.
 */
export const LEASES_PARTITION = "~leases";

interface LeaseRow {
  partitionKey: string;
  rowKey: string;
  holder: string;
  expiresAt: number;
  /** Another pass is asked of the holder; `wantedFresh`: reading ARM, not the cache. */
  wanted: boolean;
  wantedFresh: boolean;
  /** Left by the last holder for the next one; "" for none. */
  handover?: string;
}

const lostRace = (err: unknown) => statusOf(err) === 409 || statusOf(err) === 412 || statusOf(err) === 404;
/**
 * A holder never sets an expiry further ahead than its TTL (plus this much clock skew between hosts): a row that says
 * otherwise was not written by a holder, and is treated as expired, so a planted far-future expiry cannot defer
 * repair forever.
 */
export const LEASE_CLOCK_SKEW_MS = 60_000;

/** Conditional writes lose only to another host's write to the same row; a few rounds settle any burst. */
const MAX_ROUNDS = 20;

export class ReconcileLeaseTable implements ReconcileLeases {
  /**
   * The Table ETag of each row as this process last wrote it while holding it (key: row and holder). A renewal or a
   * release first writes on it without reading: the write succeeds only if nobody touched the row since (no pass
   * asked, not taken after an expiry), which is the common case; otherwise it reads, as before. One round trip saved
   * per renewal and release, and nothing decided on a guess.
   */
  private readonly written = new Map<string, string>();

  constructor(
    readonly table: TableClient,
    private readonly now: () => number,
  ) {}

  private remember(rowKey: string, holder: string, etag: string | undefined): void {
    if (etag) this.written.set(`${rowKey}\n${holder}`, etag);
  }

  private forget(rowKey: string, holder: string): string | undefined {
    const etag = this.written.get(`${rowKey}\n${holder}`);
    this.written.delete(`${rowKey}\n${holder}`);
    return etag;
  }

  private async read(rowKey: string): Promise<(LeaseRow & { etag: string }) | undefined> {
    try {
      const e = await this.table.getEntity<LeaseRow>(LEASES_PARTITION, rowKey);
      return {
        ...e,
        holder: e.holder ?? "",
        expiresAt: Number(e.expiresAt),
        wanted: e.wanted === true,
        wantedFresh: e.wantedFresh === true,
        handover: e.handover ?? "",
        etag: e.etag,
      };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async acquire(ref: TargetRef, holder: string, ttlMs: number, fresh: boolean): Promise<LeaseTake> {
    const rowKey = cachePartition(ref);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const row = await this.read(rowKey);
      const now = this.now();
      try {
        const believable =
          row !== undefined && Number.isFinite(row.expiresAt) && row.expiresAt <= now + ttlMs + LEASE_CLOCK_SKEW_MS;
        if (row && believable && row.holder !== "" && row.holder !== holder && row.expiresAt > now) {
          if (row.wanted && (row.wantedFresh || !fresh))
            return { kind: "held", firstToAsk: false, expiresAt: row.expiresAt };
          await this.table.updateEntity(
            { partitionKey: LEASES_PARTITION, rowKey, wanted: true, wantedFresh: row.wantedFresh || fresh },
            "Merge",
            {
              etag: row.etag,
            },
          );
          return { kind: "held", firstToAsk: !row.wanted, expiresAt: row.expiresAt };
        }
        // Free, expired (its holder died) or ours: the pass about to run reads everything, so earlier requests are met.
        const entity: LeaseRow = {
          partitionKey: LEASES_PARTITION,
          rowKey,
          holder,
          expiresAt: now + ttlMs,
          wanted: false,
          wantedFresh: false,
          handover: row?.handover ?? "",
        };
        const answer = !row
          ? await this.table.createEntity(entity)
          : await this.table.updateEntity(entity, "Replace", { etag: row.etag });
        this.remember(rowKey, holder, answer.etag);
        return row?.handover ? { kind: "acquired", handover: row.handover } : { kind: "acquired" };
      } catch (err) {
        if (!lostRace(err)) throw err;
      }
    }
    throw new Error(`reconcile lease of ${ref.id}: still contended after ${MAX_ROUNDS} rounds`);
  }

  async renew(ref: TargetRef, holder: string, ttlMs: number): Promise<boolean> {
    const rowKey = cachePartition(ref);
    const renewed = (etag: string) =>
      this.table.updateEntity({ partitionKey: LEASES_PARTITION, rowKey, expiresAt: this.now() + ttlMs }, "Merge", {
        etag,
      });
    const known = this.forget(rowKey, holder);
    if (known !== undefined) {
      try {
        this.remember(rowKey, holder, (await renewed(known)).etag);
        return true;
      } catch (err) {
        if (!lostRace(err)) throw err;
      }
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const row = await this.read(rowKey);
      if (!row || row.holder !== holder) return false;
      try {
        const etag = (await renewed(row.etag)).etag;
        // A row that asks for another pass is not remembered: the release's write on a remembered ETag lets go without
        // reading, and would drop the request (it must read it and run again).
        if (!row.wanted) this.remember(rowKey, holder, etag);
        return true;
      } catch (err) {
        if (!lostRace(err)) throw err;
      }
    }
    return false;
  }

  async release(
    ref: TargetRef,
    holder: string,
    ttlMs: number,
    handover?: string,
  ): Promise<{ again: false } | { again: true; fresh: boolean }> {
    const rowKey = cachePartition(ref);
    const free = (kept: string): LeaseRow => ({
      partitionKey: LEASES_PARTITION,
      rowKey,
      holder: "",
      expiresAt: 0,
      wanted: false,
      wantedFresh: false,
      handover: handover ?? kept,
    });
    const known = this.forget(rowKey, holder);
    if (known !== undefined) {
      // Unchanged since our own write: still ours and nobody asked for another pass, so it is let go as is (a merge:
      // without a handover of ours, the row keeps the one it has).
      const { handover: _kept, ...unheld } = free("");
      try {
        await this.table.updateEntity(handover === undefined ? unheld : free(handover), "Merge", { etag: known });
        return { again: false };
      } catch (err) {
        if (!lostRace(err)) throw err;
      }
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const row = await this.read(rowKey);
      // Not ours any more (it expired and another host took it): that host's pass covers what was asked.
      if (!row || row.holder !== holder) return { again: false };
      try {
        if (row.wanted) {
          const kept: LeaseRow = {
            partitionKey: LEASES_PARTITION,
            rowKey,
            holder,
            expiresAt: this.now() + ttlMs,
            wanted: false,
            wantedFresh: false,
            handover: handover ?? row.handover ?? "",
          };
          this.remember(rowKey, holder, (await this.table.updateEntity(kept, "Replace", { etag: row.etag })).etag);
          return { again: true, fresh: row.wantedFresh };
        }
        // Kept, free (no holder), with what the next holder should know.
        await this.table.updateEntity(free(row.handover ?? ""), "Replace", { etag: row.etag });
        return { again: false };
      } catch (err) {
        if (!lostRace(err)) throw err;
      }
    }
    throw new Error(`reconcile lease of ${ref.id}: release still contended after ${MAX_ROUNDS} rounds`);
  }
}
