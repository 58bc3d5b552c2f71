import { createHash } from "node:crypto";
import type { BackendPoolModel, PoolAddress } from "./models";
import { selectIpConfiguration, type IpConfigSelector, type NicConfiguration } from "./networkProfile";
import type { AdminState } from "./poolKinds";

/**
 * IP-based load balancer pools (issue 43), pure: the pool itself lists its members' addresses, so a declaration puts
 * the target's private addresses in the pool's `loadBalancerBackendAddresses` instead of a pool reference on its ip
 * configurations. Every address poolsync writes carries a name it recognises as its own, `poolsync-<target>-<ip
 * configuration>-<member>` (hashes of the target and the declaration's ip configuration, then the instance ID or VM
 * name): it never removes, renames or changes an address it did not add, and one target's pass never touches
 * another target's addresses.
 */

/** A member of the target: a Uniform instance (by its ID) or a VM (by its name), with its NICs as ARM lists them. */
export interface PoolMember {
  member: string;
  nics: NicConfiguration[];
}

/** What one declaration asks of an IP-based pool. */
export interface AddressIntent {
  selector: IpConfigSelector;
  /** The selector as stored (`declarationKey`'s second half): names the declaration's addresses. */
  selectorText: string;
  state: "present" | "absent";
  adminState?: AdminState | undefined;
  /** The members adminState applies to (instance IDs or VM names); absent: all. */
  adminInstances?: readonly string[] | undefined;
}

/** One declaration's share of a pool write: the addresses under its prefix, as it wants them. */
export interface Contribution {
  /** Every address whose name starts with this is this declaration's, and only those. */
  prefix: string;
  wanted: PoolAddress[];
  /**
   * A move's removal: an address of this prefix is removed only when this says so (its member is in the pool moved
   * to); the others stay as they are. Absent: every address of the prefix not wanted goes.
   */
  removable?: (a: PoolAddress) => boolean;
}

const MAX_NAME = 80;
const MEMBER_ROOM = 40;

const hash = (text: string, hex: number) => createHash("sha256").update(text).digest("hex").slice(0, hex);
const lower = (s: string | undefined) => (s ?? "").toLowerCase();

/** Every address name poolsync writes starts with this. */
export const ADDRESS_NAME_MARK = "poolsync-";

/** The prefix of every address this target's declarations write. */
export function targetAddressPrefix(targetKey: string): string {
  return `${ADDRESS_NAME_MARK}${hash(targetKey.toLowerCase(), 8)}-`;
}

/** The prefix of one declaration's addresses: its target, then its ip configuration selector. */
export function declarationAddressPrefix(targetKey: string, selectorText: string): string {
  return `${targetAddressPrefix(targetKey)}${hash(selectorText.toLowerCase(), 4)}-`;
}

/** A member's address name under a prefix, within Azure's 80 characters (a long VM name is cut and hashed). */
export function addressName(prefix: string, member: string): string {
  const safe = member.replace(/[^A-Za-z0-9_.-]/g, "_");
  const part = safe.length <= MEMBER_ROOM ? safe : `${safe.slice(0, MEMBER_ROOM - 9)}-${hash(safe, 8)}`;
  return `${prefix}${part}`.slice(0, MAX_NAME);
}

/**
 * The addresses a `present` declaration wants: per member, the private address of the ip configuration its selector
 * names (v4 or v6, whichever that is), in that ip configuration's subnet, with the declared admin state where it
 * applies. A member whose ip configuration cannot be found, or has no address yet, is named in `unplaced`.
 */
export function wantedAddresses(
  prefix: string,
  intent: AddressIntent,
  members: readonly PoolMember[],
): { wanted: PoolAddress[]; unplaced: { member: string; reason: string }[] } {
  const wanted: PoolAddress[] = [];
  const unplaced: { member: string; reason: string }[] = [];
  if (intent.state !== "present") return { wanted, unplaced };
  const adminFor = new Set((intent.adminInstances ?? []).map(lower));
  for (const m of members) {
    const ip = selectIpConfiguration(m.nics, intent.selector);
    if (typeof ip === "string") {
      unplaced.push({ member: m.member, reason: ip });
      continue;
    }
    const address = typeof ip["privateIPAddress"] === "string" ? ip["privateIPAddress"] : undefined;
    if (!address) {
      unplaced.push({ member: m.member, reason: `ip configuration "${ip.name}" has no private IP address yet` });
      continue;
    }
    const subnet = (ip["subnet"] as { id?: unknown } | undefined)?.id;
    // An address names its virtual network, as Azure documents the IP-based pool (the subnet's network).
    const network = typeof subnet === "string" ? subnet.replace(/\/subnets\/[^/]+$/i, "") : undefined;
    const admin =
      intent.adminState !== undefined && (intent.adminInstances === undefined || adminFor.has(lower(m.member)))
        ? intent.adminState
        : undefined;
    wanted.push({
      name: addressName(prefix, m.member),
      ipAddress: address,
      ...(network !== undefined ? { virtualNetworkId: network } : {}),
      ...(admin !== undefined ? { adminState: admin } : {}),
    });
  }
  return { wanted, unplaced };
}

const sameAddress = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && lower(a) === lower(b);

function owner(name: string, contributions: readonly Contribution[]): Contribution | undefined {
  return contributions.find((c) => lower(name).startsWith(lower(c.prefix)));
}

/**
 * An address of ours as wanted, keeping what we do not own of the entry as read: an admin state nobody declared, and
 * where it says it lives (an address's network follows from its IP; how NRP echoes it is NRP's business).
 */
function merged(current: PoolAddress, want: PoolAddress): PoolAddress {
  const located = current.virtualNetworkId !== undefined || current.subnetId !== undefined;
  return {
    ...current,
    ipAddress: want.ipAddress,
    ...(located ? {} : { virtualNetworkId: want.virtualNetworkId }),
    adminState: want.adminState ?? current.adminState,
  };
}

const equalAddress = (a: PoolAddress, b: PoolAddress) =>
  a.name === b.name &&
  lower(a.ipAddress) === lower(b.ipAddress) &&
  lower(a.adminState) === lower(b.adminState) &&
  lower(a.virtualNetworkId) === lower(b.virtualNetworkId) &&
  lower(a.subnetId) === lower(b.subnetId);

/**
 * The contribution as this pool takes it: a pool that names its own virtual network (syncMode pools) refuses an
 * address that names one too, so its addresses name none; an Application Gateway's address is an IP alone.
 */
export function fitToPool(c: Contribution, pool: Pick<BackendPoolModel, "pool" | "gateway">): Contribution {
  if (pool.gateway !== undefined)
    return { ...c, wanted: c.wanted.map((w) => ({ name: w.name, ipAddress: w.ipAddress })) };
  const network = (pool.pool["virtualNetwork"] as { id?: unknown } | undefined)?.id;
  if (typeof network !== "string") return c;
  return { ...c, wanted: c.wanted.map(({ virtualNetworkId: _, subnetId: __, ...rest }) => rest) };
}

/**
 * The pool's addresses with every contribution applied, or undefined when nothing changes. Addresses under no
 * contribution's prefix stay exactly as read, in their place; ours are changed in place, removed, or added at the
 * end. An address another writer already lists (by IP) is not added twice: NRP refuses a duplicate, and the member
 * is in the pool.
 */
export function planAddresses(
  current: readonly PoolAddress[],
  contributions: readonly Contribution[],
): PoolAddress[] | undefined {
  const wantedByName = new Map<string, PoolAddress>();
  for (const c of contributions) for (const w of c.wanted) wantedByName.set(lower(w.name), w);
  const next: PoolAddress[] = [];
  for (const a of current) {
    const mine = owner(a.name, contributions);
    if (!mine) {
      next.push(a);
      continue;
    }
    const want = wantedByName.get(lower(a.name));
    if (want) next.push(merged(a, want));
    else if (mine.removable && !mine.removable(a)) next.push(a);
  }
  const names = new Set(next.map((a) => lower(a.name)));
  for (const w of wantedByName.values()) {
    if (names.has(lower(w.name))) continue;
    if (next.some((a) => sameAddress(a.ipAddress, w.ipAddress))) continue;
    next.push(w);
    names.add(lower(w.name));
  }
  const changed = next.length !== current.length || next.some((a, i) => !equalAddress(a, current[i]!));
  return changed ? next : undefined;
}

/**
 * Whether the pool holds what a contribution wants: each wanted address (by name with its admin state, or its IP
 * under another writer's name), and none of its prefix that it does not want (a move's removal: none it may remove).
 */
export function contributionHeld(addresses: readonly PoolAddress[], c: Contribution): boolean {
  for (const w of c.wanted) {
    const byName = addresses.find((a) => lower(a.name) === lower(w.name));
    if (byName) {
      if (!sameAddress(byName.ipAddress, w.ipAddress)) return false;
      if (w.adminState !== undefined && lower(byName.adminState ?? "None") !== lower(w.adminState)) return false;
    } else if (!addresses.some((a) => sameAddress(a.ipAddress, w.ipAddress))) return false;
  }
  const wanted = new Set(c.wanted.map((w) => lower(w.name)));
  return !addresses.some(
    (a) => lower(a.name).startsWith(lower(c.prefix)) && !wanted.has(lower(a.name)) && (c.removable?.(a) ?? true),
  );
}

/** Our addresses whose admin state someone changed away from the declared one (a drift to repair and record). */
export function adminStateDrift(addresses: readonly PoolAddress[], c: Contribution): PoolAddress[] {
  return c.wanted.flatMap((w) => {
    if (w.adminState === undefined) return [];
    const a = addresses.find((x) => lower(x.name) === lower(w.name));
    return a && lower(a.adminState ?? "None") !== lower(w.adminState) ? [a] : [];
  });
}
