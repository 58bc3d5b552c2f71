import type { PoolAddress } from "./models";
import type { TargetRef } from "./resourceIds";

/**
 * Application Gateway pools that list addresses (issue 43), pure. A gateway pool's `backendAddresses` are an IP or an
 * FQDN and nothing else: no name to mark an address poolsync added, as an IP-based load balancer pool's has. So each
 * target keeps a record of the addresses it added to each gateway pool (its claims: the name poolsync would have
 * given the address, and its IP; docs/storage.md), and the addresses read from the gateway are named from those
 * claims before the one address planner (core/ipPoolAddresses.ts) sees them. An address no claim names keeps an empty
 * name, which no declaration's prefix owns: it is another writer's and stays exactly as read.
 *
 * The record is kept so that it never claims an address another writer added: a claim is added only after the
 * gateway answered the write that added the address, and dropped before the write that removes it is sent. A write
 * the gateway refused (412, 409, 429: it did not land) gives the dropped claims back, or the next pass would read our
 * addresses as another's and report an absent done while they stay. A write whose answer never came keeps them as
 * `released` while the gateway holds the ETag it was conditional on (it has not landed, and any next write on that
 * ETag removes them too); once the ETag moved and the pool does not show the write, they are not claimed.
 */

/** An address a target added to a gateway pool: the name poolsync gives it, and the IP it wrote. */
export interface GatewayClaim {
  name: string;
  ipAddress: string;
}

const lower = (s: string | undefined) => (s ?? "").toLowerCase();

/**
 * The gateway pool's addresses with each claim's name on one address of its IP, in list order. A claim whose IP the
 * pool no longer lists names nothing (someone removed it: the planner adds it again while it is wanted). Two claims
 * of one IP name two addresses, never one twice; an address listed more often than claimed is another writer's too.
 */
export function nameClaimed(addresses: readonly PoolAddress[], claims: readonly GatewayClaim[]): PoolAddress[] {
  const open = [...claims];
  return addresses.map((a) => {
    const unnamed = { ...a, name: "" };
    if (a.ipAddress === undefined) return unnamed;
    const i = open.findIndex((c) => lower(c.ipAddress) === lower(a.ipAddress));
    if (i < 0) return unnamed;
    const [claim] = open.splice(i, 1);
    return { ...a, name: claim!.name };
  });
}

/** The claims an address list holds under a prefix (a target's or a declaration's): the named addresses, in order. */
export function claimsUnder(addresses: readonly PoolAddress[], prefix: string): GatewayClaim[] {
  return addresses.flatMap((a) =>
    a.name !== "" && lower(a.name).startsWith(lower(prefix)) && a.ipAddress !== undefined
      ? [{ name: a.name, ipAddress: a.ipAddress }]
      : [],
  );
}

/**
 * The claims to keep before a write that turns `before` into `after` is sent: those whose address the write keeps.
 * A claim the write removes goes first, so that a write that lands without its answer reaching us leaves no claim on
 * an address another writer may list again later.
 */
export function claimsKeptBy(claims: readonly GatewayClaim[], after: readonly PoolAddress[]): GatewayClaim[] {
  return matchClaims(claims, after).matched;
}

/** Each claim matched one for one against a list by name and IP: those matched, in order, and the rest. */
function matchClaims(
  claims: readonly GatewayClaim[],
  list: readonly { name: string; ipAddress?: string | undefined }[],
): { matched: GatewayClaim[]; rest: GatewayClaim[] } {
  const open = [...list];
  const matched: GatewayClaim[] = [];
  const rest: GatewayClaim[] = [];
  for (const c of claims) {
    const i = open.findIndex((a) => lower(a.name) === lower(c.name) && lower(a.ipAddress) === lower(c.ipAddress));
    if (i < 0) rest.push(c);
    else {
      open.splice(i, 1);
      matched.push(c);
    }
  }
  return { matched, rest };
}

/**
 * The addresses a gateway answered a write with, named after the ones sent (one to one, by IP or FQDN, in order):
 * NRP answers the pool as written, without names.
 */
export function namedAsSent(answered: readonly PoolAddress[], sent: readonly PoolAddress[]): PoolAddress[] {
  const key = addressKey;
  const open = sent.filter((a) => a.name !== "");
  return answered.map((a) => {
    const i = open.findIndex((s) => key(s) === key(a));
    if (i < 0) return { ...a, name: "" };
    const [match] = open.splice(i, 1);
    return { ...a, name: match!.name };
  });
}

export const sameClaims = (a: readonly GatewayClaim[], b: readonly GatewayClaim[]) =>
  a.length === b.length &&
  a.every((c, i) => lower(c.name) === lower(b[i]!.name) && lower(c.ipAddress) === lower(b[i]!.ipAddress));

/**
 * A gateway write of a target's whose answer never came (issue 43's in-doubt writes): the ETag it was conditional on,
 * the pool's addresses it sent (IP or FQDN, in order), the claims it would have earned, and the claims it dropped
 * (the addresses it takes out: still ours while it has not landed).
 */
export interface GatewayDoubt {
  ifMatch: string;
  sent: string[];
  claims: GatewayClaim[];
  released?: GatewayClaim[] | undefined;
}

/** A target's record on one gateway pool: its claims, and its write in doubt if one may have landed unseen. */
export interface GatewayRecord {
  claims: GatewayClaim[];
  doubt?: GatewayDoubt | undefined;
}

const addressKey = (a: PoolAddress) => lower(a.ipAddress ?? String((a.rest ?? {})["fqdn"] ?? ""));

/**
 * The doubt a gateway write leaves when its answer never came: what it sent, its claims under the prefix, and the
 * claims it dropped before it was sent.
 */
export function doubtOf(
  ifMatch: string,
  sent: readonly PoolAddress[],
  targetPrefix: string,
  released: readonly GatewayClaim[] = [],
): GatewayDoubt {
  return {
    ifMatch,
    sent: sent.map(addressKey),
    claims: claimsUnder(sent, targetPrefix),
    ...(released.length > 0 ? { released: [...released] } : {}),
  };
}

/** The claims a write drops: those `claims` holds that `kept` does not (one for one, as claimsKeptBy keeps them). */
export function claimsDropped(claims: readonly GatewayClaim[], kept: readonly GatewayClaim[]): GatewayClaim[] {
  return matchClaims(claims, kept).rest;
}

/**
 * What a write in doubt earned, judged on the pool as read now: `pending` while the gateway keeps the ETag the write
 * was conditional on (it may still land); `landed` with its claims when the ETag moved and the pool lists exactly
 * what it sent, every address in order (no other write has touched the pool since); otherwise `unknown`: its claims
 * are not taken, so an address it may have added is kept as another writer's, never removed by poolsync.
 */
export function settleDoubt(
  doubt: GatewayDoubt,
  pool: { etag: string; addresses: readonly PoolAddress[] },
): { kind: "pending" } | { kind: "landed"; claims: GatewayClaim[] } | { kind: "unknown" } {
  if (pool.etag === doubt.ifMatch) return { kind: "pending" };
  const now = pool.addresses.map(addressKey);
  const same = now.length === doubt.sent.length && now.every((k, i) => k === doubt.sent[i]);
  return same ? { kind: "landed", claims: doubt.claims } : { kind: "unknown" };
}

/**
 * The claims a record holds on the pool as read: its own; those of its write in doubt if the pool shows it landed;
 * and those that write dropped while it is pending (it has not landed: the addresses it takes out are still ours).
 */
export function recordClaims(
  record: GatewayRecord,
  pool: { etag: string; addresses: readonly PoolAddress[] },
): GatewayClaim[] {
  const doubt = record.doubt ? settleDoubt(record.doubt, pool) : undefined;
  const earned = doubt?.kind === "landed" ? record.doubt!.claims : [];
  const released = doubt?.kind === "pending" ? (record.doubt!.released ?? []) : [];
  return [...record.claims, ...earned, ...released];
}

/** Each target's record of the addresses it added to each Application Gateway pool (docs/storage.md). */
export interface GatewayClaimStore {
  /** The target's record on the pool (no claims when it added none). */
  read(target: TargetRef, poolKey: string): Promise<GatewayRecord>;
  /** Replaces the target's record on the pool. */
  write(target: TargetRef, poolKey: string, record: GatewayRecord): Promise<void>;
}
