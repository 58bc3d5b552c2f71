import type { IpConfigSelector, IpVersion, PoolIntent } from "./networkProfile";
import type { AdminState } from "./poolKinds";
import { parseSelector, selectorText } from "./networkProfile";

/** A user's intent for one (scale set, backend pool, ip configuration), as stored in the memberships table. */
export interface Declaration {
  /**
   * Any target's ID (scale set or VM). Named so in the table and in older hosts' messages: renaming would break stored
   * rows.
   */
  scaleSetId: string;
  backendPoolId: string;
  /**
   * Without ipVersion: "" = the primary ip configuration of the primary NIC; else "ipconfig" or "nic/ipconfig".
   * With ipVersion: the NIC configuration whose ip configuration of that version is meant ("" = the primary NIC).
   */
  ipConfiguration: string;
  /**
   * The ip configuration of this IP version (dual stack). Stored inside the ipConfiguration column: see
   * membershipTable.
   */
  ipVersion?: IpVersion;
  state: "present" | "absent";
  declaredAt: string;
  requestId: string;
  /** Who declared it: an Entra principal, the function key's holder, or "queue" for a declare message. */
  declaredBy: DeclaredBy;
  /**
   * The admin state of the target's members in the pool (issue 43: an IP-based load balancer pool's addresses are
   * the only members Azure gives one); absent: poolsync sets none.
   */
  adminState?: AdminState;
  /** The members `adminState` applies to (Uniform instance IDs, or VM names); absent: every member. */
  adminInstances?: string[];
  /**
   * Half of a move (`PUT /api/memberships/move`): this `absent` is applied only where the pool it moves to is
   * present, in the same write, so that no moment holds neither.
   */
  movedTo?: string;
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
  /**
   * "pool": applied on an IP-based pool, which lists the target's addresses itself (issue 43): the ip configurations
   * the status views read from the cache say nothing of it, the outcome is what ARM answered the pool write.
   */
  via?: "pool";
}

export interface StoredDeclaration extends Declaration {
  outcome: Outcome;
  attempts: number;
  /** Table Storage ETag of the row, so outcome writes never clobber a newer declaration. */
  rowEtag: string;
}

export function toIntent(d: Declaration): PoolIntent {
  return {
    backendPoolId: d.backendPoolId,
    selector: selectorOf(d),
    state: d.state,
    ...(d.movedTo !== undefined && d.state === "absent" ? { movedTo: d.movedTo } : {}),
  };
}

/** Which ip configuration the declaration is about, from its two fields. */
export function selectorOf(d: Pick<Declaration, "ipConfiguration" | "ipVersion">): IpConfigSelector {
  if (d.ipVersion)
    return d.ipConfiguration
      ? { kind: "version", nic: d.ipConfiguration, version: d.ipVersion }
      : { kind: "version", version: d.ipVersion };
  return parseSelector(d.ipConfiguration || undefined);
}

/**
 * The selector as one text, as every version before the ipVersion field stored it ("@IPv6", "nic/@IPv6" for a
 * version): the row key and the ipConfiguration column keep this form, so stored rows keep their keys.
 */
export function ipSelectorText(d: Pick<Declaration, "ipConfiguration" | "ipVersion">): string {
  return selectorText(selectorOf(d));
}

/** The fields of a selector text as stored (the inverse of ipSelectorText). */
export function fromIpSelectorText(text: string): Pick<Declaration, "ipConfiguration" | "ipVersion"> {
  const selector = parseSelector(text || undefined);
  if (selector.kind === "version") return { ipConfiguration: selector.nic ?? "", ipVersion: selector.version };
  return { ipConfiguration: text };
}

/** Identity of a declaration within its scale set: pool and ip configuration, case-insensitive. */
export function declarationKey(d: Pick<Declaration, "backendPoolId" | "ipConfiguration" | "ipVersion">): string {
  return `${d.backendPoolId.toLowerCase()}|${ipSelectorText(d).toLowerCase()}`;
}

/**
 * Whether recording `next` over the stored outcome finishes the declaration: applied where it was not, or applied
 * everywhere where it was not. Such an outcome is recorded only from what ARM answered in the same pass (issue 41).
 */
export function finishes(d: Pick<StoredDeclaration, "outcome">, next: Omit<Outcome, "at">): boolean {
  if (next.kind !== "applied") return false;
  return d.outcome.kind !== "applied" || (next.appliedEverywhere === true && d.outcome.appliedEverywhere !== true);
}

/** A declaration that failed on its own, with a retry time still to come: writing it sooner would only fail again. */
export function waitsForRetry(d: StoredDeclaration, now: number): boolean {
  return d.outcome.kind === "failed" && !!d.outcome.retryAt && Date.parse(d.outcome.retryAt) > now;
}

/** A declaration that failed on its own and whose retry time has come. */
/**
 * A declaration's row kept changing between each read and conditional write (other writers of the same row, e.g.
 * outcomes of reconciles in flight): a race, not storage down. The caller may simply try again.
 */
export class DeclarationContendedError extends Error {
  override name = "DeclarationContendedError";
}

/** The first wait after ARM answered 404 for a declared target, and the longest. */
export const NOT_FOUND_FIRST_WAIT_MS = 5 * 60_000;
export const NOT_FOUND_MAX_WAIT_MS = 24 * 60 * 60_000;

/**
 * What a declaration records when ARM answers 404 for its target: target-deleted, with the time the timer looks
 * again, each time twice as far as the last (from 5 minutes up to a day). The wait is kept on the declaration, in
 * Storage, so every host sees it; a new declaration (its outcome pending again) starts from the first wait. An event
 * for the target does not wait: it asks for a reconcile, which reads ARM at once.
 */
export function notFoundOutcome(prev: Outcome, reason: string, now: number): Omit<Outcome, "at"> {
  const lastWait =
    prev.kind === "target-deleted" && prev.retryAt ? Date.parse(prev.retryAt) - Date.parse(prev.at) : Number.NaN;
  const wait = Number.isFinite(lastWait)
    ? Math.min(NOT_FOUND_MAX_WAIT_MS, Math.max(NOT_FOUND_FIRST_WAIT_MS, lastWait * 2))
    : NOT_FOUND_FIRST_WAIT_MS;
  const retryAt = new Date(now + wait).toISOString();
  return {
    kind: "target-deleted",
    reason: `${reason.slice(0, 512)}; waiting for the target to exist: the timer looks again at ${retryAt}`,
    retryAt,
  };
}

/**
 * A target ARM answered 404 for, not yet due for another look. A wait longer than the longest is not one poolsync
 * recorded (storage content is input): it does not defer anything.
 */
export function waitingForTarget(d: StoredDeclaration, now: number): boolean {
  if (d.outcome.kind !== "target-deleted" || !d.outcome.retryAt) return false;
  const due = Date.parse(d.outcome.retryAt);
  return due > now && due - now <= NOT_FOUND_MAX_WAIT_MS;
}

export function dueForRetry(d: StoredDeclaration, now: number): boolean {
  return d.outcome.kind === "failed" && !!d.outcome.retryAt && Date.parse(d.outcome.retryAt) <= now;
}
