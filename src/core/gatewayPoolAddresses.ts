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
 * lost in between leaves the address unclaimed (kept as another writer's: never removed by poolsync), never the
 * other way round.
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
  const open = [...after];
  return claims.filter((c) => {
    const i = open.findIndex((a) => lower(a.name) === lower(c.name) && lower(a.ipAddress) === lower(c.ipAddress));
    if (i < 0) return false;
    open.splice(i, 1);
    return true;
  });
}

/**
 * The addresses a gateway answered a write with, named after the ones sent (one to one, by IP or FQDN, in order):
 * NRP answers the pool as written, without names.
 */
export function namedAsSent(answered: readonly PoolAddress[], sent: readonly PoolAddress[]): PoolAddress[] {
  const key = (a: PoolAddress) => lower(a.ipAddress ?? String((a.rest ?? {})["fqdn"] ?? ""));
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

/** Each target's record of the addresses it added to each Application Gateway pool (docs/storage.md). */
export interface GatewayClaimStore {
  /** The target's claims on the pool (none when it added none). */
  read(target: TargetRef, poolKey: string): Promise<GatewayClaim[]>;
  /** Replaces the target's claims on the pool (an empty list: it holds none there). */
  write(target: TargetRef, poolKey: string, claims: readonly GatewayClaim[]): Promise<void>;
}
