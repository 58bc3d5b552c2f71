import type { PoolIntent } from "./networkProfile";
import { parseSelector } from "./networkProfile";

/** A user's intent for one (scale set, backend pool, ip configuration), as stored in the memberships table. */
export interface Declaration {
  /** Any target's ID (scale set or VM). Named so in the table and in older hosts' messages: renaming would break stored rows. */
  scaleSetId: string;
  backendPoolId: string;
  /** "" = the primary ip configuration of the primary NIC; else "ipconfig" or "nic/ipconfig". */
  ipConfiguration: string;
  state: "present" | "absent";
  declaredAt: string;
  requestId: string;
  /** Who declared it: an Entra principal, the function key's holder, or "queue" for a declare message. */
  declaredBy: DeclaredBy;
}

export interface DeclaredBy {
  id: string;
  name: string;
  via: "entra" | "key" | "queue";
}

/** A declare message on the queue carries no caller: whoever may put messages on the queue is trusted as "queue". */
export const QUEUE_DECLARER: DeclaredBy = { id: "queue", name: "queue", via: "queue" };

/**
 * How far in the future a declaredAt may lie (clock skew between producers): a later one would win over every
 * declaration made until then, pinning the row.
 */
export const MAX_DECLARED_AHEAD_MS = 5 * 60_000;

export type OutcomeKind = "pending" | "applied" | "failed" | "refused" | "target-deleted" | "target-deleting";

export interface Outcome {
  kind: OutcomeKind;
  reason?: string;
  /** Scale set model ETag our write (or our read, when nothing needed writing) saw. */
  appliedEtag?: string;
  at: string;
  /** absent and gone from the model and every instance: the timer may remove the declaration. */
  appliedEverywhere?: boolean;
  /** When the timer may try a failed declaration again. */
  retryAt?: string;
}

export interface StoredDeclaration extends Declaration {
  outcome: Outcome;
  attempts: number;
  /** Table Storage ETag of the row, so outcome writes never clobber a newer declaration. */
  rowEtag: string;
}

export function toIntent(d: Declaration): PoolIntent {
  return { backendPoolId: d.backendPoolId, selector: parseSelector(d.ipConfiguration || undefined), state: d.state };
}

/** Identity of a declaration within its scale set: pool and ip configuration, case-insensitive. */
export function declarationKey(d: Pick<Declaration, "backendPoolId" | "ipConfiguration">): string {
  return `${d.backendPoolId.toLowerCase()}|${d.ipConfiguration.toLowerCase()}`;
}

/** A declaration that failed on its own, with a retry time still to come: writing it sooner would only fail again. */
export function waitsForRetry(d: StoredDeclaration, now: number): boolean {
  return d.outcome.kind === "failed" && !!d.outcome.retryAt && Date.parse(d.outcome.retryAt) > now;
}

/** A declaration that failed on its own and whose retry time has come. */
export function dueForRetry(d: StoredDeclaration, now: number): boolean {
  return d.outcome.kind === "failed" && !!d.outcome.retryAt && Date.parse(d.outcome.retryAt) <= now;
}
