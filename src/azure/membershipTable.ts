import { odata, type TableClient, type TableEntityResult } from "@azure/data-tables";
import {
  DeclarationContendedError,
  declarationKey,
  fromIpSelectorText,
  ipSelectorText,
  type Declaration,
  type DeclaredBy,
  type Outcome,
  type OutcomeKind,
  type StoredDeclaration,
} from "../core/declarations";
import type { DeclarationStore, UpsertResult } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { encodeKey } from "../core/tableKeys";
import { PartitionBatcher } from "./partitionBatcher";
import { statusOf } from "./tableErrors";

/**
 * The memberships table: one partition per scale set (so a reconcile reads all its declarations in one query),
 * one row per (pool, ip configuration).
 *
 * A finished `absent` is removed by marking its row (`removedAt`), not deleting it: a delayed or redelivered older
 * message for the same key (a release after a failed upsert, the SDK's retries through a storage outage) must still
 * lose to it, and with no row it would be created and win. Readers never see marked rows; the marks are dropped once
 * no older message can still arrive (a queue message lives at most 7 days).
 */

export const REMOVED_RETENTION_MS = 7 * 24 * 3_600_000;

interface Row {
  partitionKey: string;
  rowKey: string;
  scaleSetId: string;
  backendPoolId: string;
  ipConfiguration: string;
  state: string;
  declaredAt: string;
  requestId: string;
  declaredById?: string;
  declaredByName?: string;
  declaredVia?: string;
  outcomeKind: string;
  outcomeReason?: string;
  appliedEtag?: string;
  outcomeAt: string;
  appliedEverywhere?: boolean;
  retryAt?: string;
  attempts: number;
  /** Set when the timer removed the finished declaration: the row stays as the key's newest declaredAt. */
  removedAt?: string;
}

export const scaleSetPartition = (target: TargetRef) => encodeKey(target.key);

function toStored(row: TableEntityResult<Row>): StoredDeclaration {
  const outcome: Outcome = { kind: row.outcomeKind as OutcomeKind, at: row.outcomeAt };
  if (row.outcomeReason) outcome.reason = row.outcomeReason;
  if (row.appliedEtag) outcome.appliedEtag = row.appliedEtag;
  if (row.appliedEverywhere) outcome.appliedEverywhere = true;
  if (row.retryAt) outcome.retryAt = row.retryAt;
  return {
    scaleSetId: row.scaleSetId,
    backendPoolId: row.backendPoolId,
    ...fromIpSelectorText(row.ipConfiguration),
    state: row.state === "absent" ? "absent" : "present",
    declaredAt: row.declaredAt,
    requestId: row.requestId,
    // Rows stored before callers were recorded came through the queue or an unauthenticated API: say so.
    declaredBy: {
      id: row.declaredById || "unknown",
      name: row.declaredByName || "unknown",
      via: (["entra", "key", "queue"].includes(row.declaredVia ?? "") ? row.declaredVia : "key") as DeclaredBy["via"],
    },
    outcome,
    attempts: row.attempts ?? 0,
    rowEtag: row.etag,
  };
}

function outcomeFields(
  o: Outcome,
): Pick<Row, "outcomeKind" | "outcomeReason" | "appliedEtag" | "outcomeAt" | "appliedEverywhere" | "retryAt"> {
  return {
    outcomeKind: o.kind,
    outcomeReason: o.reason ?? "",
    appliedEtag: o.appliedEtag ?? "",
    outcomeAt: o.at,
    appliedEverywhere: o.appliedEverywhere ?? false,
    retryAt: o.retryAt ?? "",
  };
}

export class MembershipTable implements DeclarationStore {
  /** The outcomes a reconcile records together (one partition: the scale set's) go in one transaction. */
  private readonly outcomes: PartitionBatcher;

  constructor(
    readonly table: TableClient,
    private readonly now: () => number = Date.now,
  ) {
    this.outcomes = new PartitionBatcher(table);
  }

  private rowOf(target: TargetRef, d: Declaration): Row {
    return {
      partitionKey: scaleSetPartition(target),
      rowKey: encodeKey(declarationKey(d)),
      scaleSetId: d.scaleSetId,
      backendPoolId: d.backendPoolId,
      // The IP version stays encoded in this column ("@IPv6", "nic/@IPv6") as every earlier version wrote it, and
      // decoded into Declaration.ipVersion on read (toStored): rows stored before the field existed read the same,
      // and a host of the previous version, during a rolling deployment, reads rows this one wrote. The row key
      // (declarationKey) holds the same text, so the identity of a stored declaration does not change.
      ipConfiguration: ipSelectorText(d),
      state: d.state,
      declaredAt: d.declaredAt,
      requestId: d.requestId,
      declaredById: d.declaredBy.id,
      declaredByName: d.declaredBy.name,
      declaredVia: d.declaredBy.via,
      attempts: 0,
      ...outcomeFields({ kind: "pending", at: new Date(this.now()).toISOString() }),
    };
  }

  async upsert(
    target: TargetRef,
    d: Declaration,
    listed?: readonly StoredDeclaration[],
  ): Promise<{ result: UpsertResult; stored: StoredDeclaration }> {
    const fresh = this.rowOf(target, d);
    const key = declarationKey(d);
    // What the caller listed a moment ago stands in for the first read: a re-declaration of a listed key is one
    // conditional replace, not an insert that meets 409 and a read. A listing gone stale costs a retry, never a write
    // over a newer row (If-Match).
    const known = listed?.find((s) => declarationKey(s) === key);
    // Optimistic loop: two deliveries of different declarations for one key race here; the Table ETag decides.
    for (let attempt = 0; attempt < 8; attempt++) {
      // First try: the listed row's replace, else an insert (most declarations are new); read only after it fails.
      const existing = attempt === 0 ? known : await this.getStored(fresh.partitionKey, fresh.rowKey);
      if (!existing) {
        try {
          // The answer's ETag is the row's: no read back (a burst of declarations is bound by Table round trips).
          const created = await this.table.createEntity(fresh);
          return { result: "created", stored: toStored({ ...fresh, etag: created.etag ?? "" }) };
        } catch (err) {
          if (statusOf(err) === 409) continue;
          throw err;
        }
      }
      if (existing.requestId === d.requestId) return { result: "unchanged", stored: existing };
      if (Date.parse(existing.declaredAt) > Date.parse(d.declaredAt)) return { result: "older", stored: existing };
      try {
        const updated = await this.table.updateEntity(fresh, "Replace", { etag: existing.rowEtag });
        return { result: "updated", stored: toStored({ ...fresh, etag: updated.etag ?? "" }) };
      } catch (err) {
        // 404: the row went between our read and our write (a removal mark's retention ran out): a race we settle by
        // trying again, never a "storage unavailable".
        if (statusOf(err) === 412 || statusOf(err) === 404) continue;
        throw err;
      }
    }
    throw new DeclarationContendedError(`declaration ${key} on ${target.id} kept changing under us; try again`);
  }

  /** The row as stored, removal marks included (a mark still outranks an older declaration). */
  private async getStored(pk: string, rk: string): Promise<StoredDeclaration | undefined> {
    try {
      return toStored(await this.table.getEntity<Row>(pk, rk));
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async listForTarget(target: TargetRef): Promise<StoredDeclaration[]> {
    const out: StoredDeclaration[] = [];
    const rows = this.table.listEntities<Row>({
      queryOptions: { filter: odata`PartitionKey eq ${scaleSetPartition(target)}` },
    });
    for await (const row of rows) if (!row.removedAt) out.push(toStored(row));
    return out;
  }

  async recordOutcome(target: TargetRef, d: StoredDeclaration, outcome: Outcome): Promise<boolean> {
    const attempts = outcome.kind === "applied" ? 0 : d.attempts + (outcome.kind === "failed" ? 1 : 0);
    return this.outcomes.mergeIfMatch(
      {
        partitionKey: scaleSetPartition(target),
        rowKey: encodeKey(declarationKey(d)),
        attempts,
        ...outcomeFields(outcome),
      },
      d.rowEtag,
    );
  }

  async remove(target: TargetRef, d: StoredDeclaration): Promise<boolean> {
    try {
      // Conditional: a newer declaration that replaced the row meanwhile is never marked.
      await this.table.updateEntity(
        {
          partitionKey: scaleSetPartition(target),
          rowKey: encodeKey(declarationKey(d)),
          removedAt: new Date(this.now()).toISOString(),
        },
        "Merge",
        { etag: d.rowEtag },
      );
      return true;
    } catch (err) {
      if (statusOf(err) === 412 || statusOf(err) === 404) return false;
      throw err;
    }
  }

  /**
   * Every declaration, one partition at a time; for the timer and the status view. Removal marks past their
   * retention are dropped on the way (conditionally: a row re-declared meanwhile is never touched).
   */
  /**
   * Every live declaration. `purge`: also drop removal marks past their retention, as the timer does; a reader such
   * as GET /api/status leaves them (a GET makes no writes).
   */
  async *listAll(opts: { purge?: boolean } = {}): AsyncGenerator<StoredDeclaration> {
    for await (const row of this.table.listEntities<Row>()) {
      if (!row.removedAt) {
        yield toStored(row);
        continue;
      }
      if (!opts.purge || this.now() - Date.parse(row.removedAt) < REMOVED_RETENTION_MS) continue;
      await this.table.deleteEntity(row.partitionKey, row.rowKey, { etag: row.etag }).catch((err: unknown) => {
        if (statusOf(err) !== 412 && statusOf(err) !== 404) throw err;
      });
    }
  }
}
