import { POOL_FIELDS, poolFieldOf } from "./poolKinds";

/**
 * The membership edit, pure. Works on NIC configurations as the Compute SDK hands them over (flattened), keeping
 * every field it does not own, so a write built from its output carries other writers' fields back unchanged.
 */

export interface PoolReference {
  id?: string;
  [field: string]: unknown;
}

export interface IpConfiguration {
  name: string;
  primary?: boolean;
  /** Absent means IPv4. */
  privateIPAddressVersion?: string;
  loadBalancerBackendAddressPools?: PoolReference[];
  loadBalancerInboundNatPools?: PoolReference[];
  applicationGatewayBackendAddressPools?: PoolReference[];
  [field: string]: unknown;
}

export interface NicConfiguration {
  name: string;
  primary?: boolean;
  ipConfigurations?: IpConfiguration[];
  [field: string]: unknown;
}

/**
 * Which ip configuration a declaration is about: the primary one of the primary NIC, one by name, or the one of
 * an IP version (dual stack) on the primary NIC or a named one.
 */
export type IpConfigSelector =
  | { kind: "primary" }
  | { kind: "named"; nic?: string; ipConfiguration: string }
  | { kind: "version"; nic?: string; version: IpVersion };

export type IpVersion = "IPv4" | "IPv6";

/** How a version selector is stored in place of an ip configuration name ("@" is never part of a name). */
const VERSION_MARK = "@";

export interface PoolIntent {
  backendPoolId: string;
  selector: IpConfigSelector;
  state: "present" | "absent";
  /**
   * Half of a move: remove the pool only from an ip configuration that holds this pool (after the edit), so that one
   * write swaps them and no moment holds neither.
   */
  movedTo?: string;
}

export type IntentOutcome = { ok: true } | { ok: false; reason: string };

export interface EditResult {
  /** The new NIC configurations, or undefined when nothing changes (then nothing is written). */
  nics: NicConfiguration[] | undefined;
  /** One per intent, in the same order: whether it could be placed at all. */
  outcomes: IntentOutcome[];
}

/** Parses the user-facing form: absent/empty → primary; "ipconfig" or "nic/ipconfig". */
export function parseSelector(value: string | undefined): IpConfigSelector {
  if (value === undefined || value === "") return { kind: "primary" };
  const slash = value.indexOf("/");
  const last = value.slice(slash + 1);
  if (last.startsWith(VERSION_MARK)) {
    const version = last.slice(1).toLowerCase() === "ipv6" ? "IPv6" : "IPv4";
    return slash < 0 ? { kind: "version", version } : { kind: "version", nic: value.slice(0, slash), version };
  }
  if (slash < 0) return { kind: "named", ipConfiguration: value };
  return { kind: "named", nic: value.slice(0, slash), ipConfiguration: value.slice(slash + 1) };
}

/** The stored form of "the ip configuration of this IP version" (on the named NIC, else the primary one). */
export function versionSelectorText(version: IpVersion, nic?: string): string {
  return `${nic ? `${nic}/` : ""}${VERSION_MARK}${version}`;
}

export function selectorText(selector: IpConfigSelector): string {
  if (selector.kind === "primary") return "";
  if (selector.kind === "version") return versionSelectorText(selector.version, selector.nic);
  return selector.nic ? `${selector.nic}/${selector.ipConfiguration}` : selector.ipConfiguration;
}

const lower = (s: string | undefined) => (s ?? "").toLowerCase();

// A lone NIC or ip configuration is primary even without the flag: that is how CRP treats it.
function primaryOf<T extends { primary?: boolean }>(items: readonly T[]): number {
  const flagged = items.findIndex((i) => i.primary === true);
  if (flagged >= 0) return flagged;
  return items.length === 1 ? 0 : -1;
}

interface Location {
  nic: number;
  ip: number;
}

const versionOf = (ip: IpConfiguration | undefined) =>
  lower(ip?.privateIPAddressVersion) === "ipv6" ? "IPv6" : "IPv4";

function locate(nics: readonly NicConfiguration[], selector: IpConfigSelector): Location | string {
  if (selector.kind === "version") {
    const nic = selector.nic ? nics.findIndex((n) => lower(n.name) === lower(selector.nic)) : primaryOf(nics);
    if (nic < 0)
      return selector.nic
        ? `network interface "${selector.nic}" does not exist`
        : "there is no primary network interface";
    const matching = (nics[nic]?.ipConfigurations ?? [])
      .map((c, i) => ({ c, i }))
      .filter(({ c }) => versionOf(c) === selector.version);
    const name = nics[nic]?.name ?? "";
    if (matching.length === 0) return `network interface "${name}" has no ${selector.version} ip configuration`;
    if (matching.length > 1) {
      return `network interface "${name}" has ${matching.length} ${selector.version} ip configurations (${matching.map(({ c }) => c.name).join(", ")}): name one`;
    }
    return { nic, ip: matching[0]?.i ?? 0 };
  }
  if (selector.kind === "primary") {
    const nic = primaryOf(nics);
    if (nic < 0) return "the scale set has no primary network interface configuration";
    const ip = primaryOf(nics[nic]?.ipConfigurations ?? []);
    if (ip < 0) return `network interface configuration "${nics[nic]?.name}" has no primary ip configuration`;
    return { nic, ip };
  }
  // By name: the named NIC, else the primary NIC first, then the others in order (ip names are unique per NIC only).
  const primary = primaryOf(nics);
  const order = selector.nic
    ? nics
        .map((n, i) => ({ n, i }))
        .filter(({ n }) => lower(n.name) === lower(selector.nic))
        .map(({ i }) => i)
    : [...(primary >= 0 ? [primary] : []), ...nics.map((_, i) => i).filter((i) => i !== primary)];
  if (selector.nic && order.length === 0) return `network interface configuration "${selector.nic}" does not exist`;
  for (const nic of order) {
    const ip = (nics[nic]?.ipConfigurations ?? []).findIndex((c) => lower(c.name) === lower(selector.ipConfiguration));
    if (ip >= 0) return { nic, ip };
  }
  return `ip configuration "${selectorText(selector)}" does not exist`;
}

/** The references of the pool's own kind on an ip configuration (a NAT pool's are in loadBalancerInboundNatPools…). */
export function poolReferences(ip: IpConfiguration, poolId: string): PoolReference[] {
  return (ip[poolFieldOf(poolId)] as PoolReference[] | undefined) ?? [];
}

/** Every pool an ip configuration references, of every kind poolsync manages. */
export function allPoolReferences(ip: IpConfiguration): PoolReference[] {
  return Object.values(POOL_FIELDS).flatMap((field) => (ip[field] as PoolReference[] | undefined) ?? []);
}

function hasPool(ip: IpConfiguration, poolId: string): boolean {
  return poolReferences(ip, poolId).some((p) => lower(p.id) === lower(poolId));
}

/** An ip configuration of another IP version that already holds the pool: one pool never spans two versions. */
function otherVersionHolding(nics: readonly NicConfiguration[], poolId: string, version: string): string | undefined {
  for (const nic of nics) {
    for (const c of nic.ipConfigurations ?? []) {
      if (versionOf(c) !== version && hasPool(c, poolId)) {
        return `the pool is already on ${versionOf(c)} ip configuration "${nic.name}/${c.name}": one pool never holds ip configurations of two IP versions`;
      }
    }
  }
  return undefined;
}

/** The ip configuration a selector names on these NICs, or why there is none. */
export function selectIpConfiguration(
  nics: readonly NicConfiguration[],
  selector: IpConfigSelector,
): IpConfiguration | string {
  const at = locate(nics, selector);
  if (typeof at === "string") return at;
  return nics[at.nic]?.ipConfigurations?.[at.ip] ?? "ip configuration vanished";
}

/** Whether the pool is referenced where the intent says it should (or should not) be. */
export function intentSatisfied(nics: readonly NicConfiguration[], intent: PoolIntent): boolean | string {
  const at = locate(nics, intent.selector);
  if (typeof at === "string") return at;
  const ip = nics[at.nic]?.ipConfigurations?.[at.ip];
  if (!ip) return "ip configuration vanished";
  return hasPool(ip, intent.backendPoolId) === (intent.state === "present");
}

/**
 * Applies the intents: adds missing pool references at the end, removes unwanted ones, touches nothing else.
 * Removals come first, so an addition is checked against what stays (one pool, one IP version). Applying the
 * result again yields no change.
 */
export function applyIntents(nics: readonly NicConfiguration[], intents: readonly PoolIntent[]): EditResult {
  let next: NicConfiguration[] | undefined;
  const outcomes: IntentOutcome[] = new Array<IntentOutcome>(intents.length);
  // Removals, then additions, then the removals of moves (each only where its addition landed).
  const rank = (i: PoolIntent | undefined) => (i?.state === "present" ? 1 : i?.movedTo !== undefined ? 2 : 0);
  const order = intents.map((_, i) => i).sort((a, b) => rank(intents[a]) - rank(intents[b]));
  for (const index of order) {
    const intent = intents[index] as PoolIntent;
    const current = next ?? nics;
    const at = locate(current, intent.selector);
    if (typeof at === "string") {
      outcomes[index] = { ok: false, reason: at };
      continue;
    }
    const ip = current[at.nic]?.ipConfigurations?.[at.ip];
    // One load balancer backend pool never holds ip configurations of two IP versions (NRP refuses it).
    const clash =
      intent.state === "present" && ip && poolFieldOf(intent.backendPoolId) === "loadBalancerBackendAddressPools"
        ? otherVersionHolding(current, intent.backendPoolId, versionOf(ip))
        : undefined;
    if (clash) {
      outcomes[index] = { ok: false, reason: clash };
      continue;
    }
    if (ip && intent.movedTo !== undefined && hasPool(ip, intent.backendPoolId) && !hasPool(ip, intent.movedTo)) {
      outcomes[index] = {
        ok: false,
        reason: `the move keeps this pool until ${intent.movedTo} is on the same ip configuration, which it is not yet`,
      };
      continue;
    }
    outcomes[index] = { ok: true };
    if (!ip || hasPool(ip, intent.backendPoolId) === (intent.state === "present")) continue;
    const field = poolFieldOf(intent.backendPoolId);
    const pools = poolReferences(ip, intent.backendPoolId);
    const newPools =
      intent.state === "present"
        ? [...pools, { id: intent.backendPoolId }]
        : pools.filter((p) => lower(p.id) !== lower(intent.backendPoolId));
    // Copy only the path to the changed ip configuration; everything else is shared, never mutated.
    next = current.map((nic, n) =>
      n !== at.nic
        ? nic
        : {
            ...nic,
            ipConfigurations: (nic.ipConfigurations ?? []).map((c, i) =>
              i !== at.ip ? c : { ...c, [field]: newPools },
            ),
          },
    );
  }
  return { nics: next, outcomes };
}
