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
  loadBalancerBackendAddressPools?: PoolReference[];
  [field: string]: unknown;
}

export interface NicConfiguration {
  name: string;
  primary?: boolean;
  ipConfigurations?: IpConfiguration[];
  [field: string]: unknown;
}

/** Which ip configuration a declaration is about: the primary one of the primary NIC, or one by name. */
export type IpConfigSelector = { kind: "primary" } | { kind: "named"; nic?: string; ipConfiguration: string };

export interface PoolIntent {
  backendPoolId: string;
  selector: IpConfigSelector;
  state: "present" | "absent";
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
  if (slash < 0) return { kind: "named", ipConfiguration: value };
  return { kind: "named", nic: value.slice(0, slash), ipConfiguration: value.slice(slash + 1) };
}

export function selectorText(selector: IpConfigSelector): string {
  if (selector.kind === "primary") return "";
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

function locate(nics: readonly NicConfiguration[], selector: IpConfigSelector): Location | string {
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
    ? nics.map((n, i) => ({ n, i })).filter(({ n }) => lower(n.name) === lower(selector.nic)).map(({ i }) => i)
    : [...(primary >= 0 ? [primary] : []), ...nics.map((_, i) => i).filter((i) => i !== primary)];
  if (selector.nic && order.length === 0) return `network interface configuration "${selector.nic}" does not exist`;
  for (const nic of order) {
    const ip = (nics[nic]?.ipConfigurations ?? []).findIndex((c) => lower(c.name) === lower(selector.ipConfiguration));
    if (ip >= 0) return { nic, ip };
  }
  return `ip configuration "${selectorText(selector)}" does not exist`;
}

function hasPool(ip: IpConfiguration, poolId: string): boolean {
  return (ip.loadBalancerBackendAddressPools ?? []).some((p) => lower(p.id) === lower(poolId));
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
 * Applying the result again yields no change.
 */
export function applyIntents(nics: readonly NicConfiguration[], intents: readonly PoolIntent[]): EditResult {
  let next: NicConfiguration[] | undefined;
  const outcomes: IntentOutcome[] = [];
  for (const intent of intents) {
    const current = next ?? nics;
    const at = locate(current, intent.selector);
    if (typeof at === "string") {
      outcomes.push({ ok: false, reason: at });
      continue;
    }
    outcomes.push({ ok: true });
    const ip = current[at.nic]?.ipConfigurations?.[at.ip];
    if (!ip || hasPool(ip, intent.backendPoolId) === (intent.state === "present")) continue;
    const pools = ip.loadBalancerBackendAddressPools ?? [];
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
            ipConfigurations: (nic.ipConfigurations ?? []).map((c, i) => (i !== at.ip ? c : { ...c, loadBalancerBackendAddressPools: newPools })),
          },
    );
  }
  return { nics: next, outcomes };
}
