import { ok, refuse, type Result } from "./result";

/**
 * POOLSYNC_BINDINGS: which targets may join which backend pools. A rule is `[kind:] target => pool`, each side an ARM
 * ID prefix compared segment by segment (ASCII case-insensitive), where a `*` segment matches any one segment and a
 * `{name}` segment on the target side matches any one segment that the pool side's `{name}` must then equal (so
 * `/subscriptions/{sub}/… => /subscriptions/{sub}/…` keeps a scale set to pools of its own subscription). `kind` is
 * `scaleSets`, `vms` or `both`; a target prefix that names the resource type already says it, one that stops at a
 * resource group or subscription must say it (a rule written for scale sets must not silently admit every VM).
 * A declaration is allowed when some rule covers its target and that same rule's pool prefix covers its pool;
 * `present` and `absent` alike, since removing a pool poolsync never added is as much a change as adding one.
 * The setting is required: a rule that is just `*` allows every pairing inside POOLSYNC_SCOPES, on purpose.
 */

export type BindingKind = "scaleSets" | "vms" | "both";

export interface BindingRule {
  /** 1-based position in the setting, as a person counts. */
  index: number;
  text: string;
  target: string[];
  pool: string[];
  /** Which targets the rule is for. */
  kind: BindingKind;
  /** The rule `*`: every pairing inside POOLSYNC_SCOPES. */
  any?: boolean;
}

const segments = (id: string) => id.split("/").filter((s) => s.length > 0);
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
const PLACEHOLDER = /^\{[A-Za-z][A-Za-z0-9]*\}$/;

function parsePrefix(side: string, what: string): Result<string[]> {
  const trimmed = side.trim();
  if (!trimmed.startsWith("/subscriptions/"))
    return refuse(`${what} "${trimmed}" must be an ARM ID prefix starting with /subscriptions/`);
  if (/[^\x21-\x7e]/.test(trimmed)) return refuse(`${what} "${trimmed}" may hold only printable ASCII without spaces`);
  const segs = segments(trimmed);
  if (segs.some((s) => s === "." || s === ".."))
    return refuse(`${what} "${trimmed}" must not contain "." or ".." segments`);
  if (segs.some((s) => s.includes("*") && s !== "*"))
    return refuse(`${what} "${trimmed}": "*" stands for a whole segment, not part of one`);
  if (segs.some((s) => /[{}]/.test(s) && !PLACEHOLDER.test(s)))
    return refuse(`${what} "${trimmed}": "{name}" stands for a whole segment, not part of one`);
  return ok(segs);
}

/** The kind a target prefix names by its resource type (…/providers/Microsoft.Compute/<type>), if it names one. */
function kindNamed(target: string[]): BindingKind | undefined {
  if (
    target.length < 7 ||
    asciiLower(target[4] ?? "") !== "providers" ||
    asciiLower(target[5] ?? "") !== "microsoft.compute"
  )
    return undefined;
  const type = asciiLower(target[6] ?? "");
  return type === "virtualmachinescalesets" ? "scaleSets" : type === "virtualmachines" ? "vms" : undefined;
}

/** Rules separated by ";" or new lines; `[kind:] target => pool` each, or `*`. */
export function parseBindings(input: string): Result<BindingRule[]> {
  const parts = input
    .split(/[;\n]/)
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0)
    return refuse(
      "names no rule: write rules `[scaleSets|vms|both:] <target prefix> => <pool prefix>`, or `*` for any pairing inside POOLSYNC_SCOPES",
    );
  const rules: BindingRule[] = [];
  for (const [i, raw] of parts.entries()) {
    if (raw === "*") {
      rules.push({ index: i + 1, text: "*", target: [], pool: [], kind: "both", any: true });
      continue;
    }
    const kindMatch = /^(scaleSets|vms|both)\s*:\s*/i.exec(raw);
    const text = kindMatch ? raw.slice(kindMatch[0].length) : raw;
    const sides = text.split("=>");
    if (sides.length !== 2) return refuse(`rule ${i + 1} "${raw}" must be "<target prefix> => <pool prefix>"`);
    const target = parsePrefix(sides[0] ?? "", `rule ${i + 1} target`);
    if (!target.ok) return target;
    const pool = parsePrefix(sides[1] ?? "", `rule ${i + 1} pool`);
    if (!pool.ok) return pool;
    const bound = new Set(target.value.filter((s) => PLACEHOLDER.test(s)).map(asciiLower));
    const unbound = pool.value.find((s) => PLACEHOLDER.test(s) && !bound.has(asciiLower(s)));
    if (unbound) return refuse(`rule ${i + 1} "${raw}": pool side ${unbound} is not named on the target side`);
    const said = kindMatch
      ? ((["scaleSets", "vms", "both"] as const).find(
          (k) => k.toLowerCase() === kindMatch[1]!.toLowerCase(),
        ) as BindingKind)
      : undefined;
    const named = kindNamed(target.value);
    if (said && named && said !== named)
      return refuse(`rule ${i + 1} "${raw}" says ${said} but its target prefix names ${named}`);
    const kind = said ?? named;
    if (!kind)
      return refuse(
        `rule ${i + 1} "${raw}" covers a whole subscription or resource group: say which targets it is for with "scaleSets:", "vms:" or "both:" before it`,
      );
    rules.push({
      index: i + 1,
      text: `${said ? `${said}: ` : ""}${sides[0]!.trim()} => ${sides[1]!.trim()}`,
      target: target.value,
      pool: pool.value,
      kind,
    });
  }
  return ok(rules);
}

function covers(prefix: string[], id: string, captured: Map<string, string>, bind: boolean): boolean {
  const segs = segments(id);
  if (segs.length < prefix.length) return false;
  return prefix.every((p, i) => {
    const seg = asciiLower(segs[i] ?? "");
    if (p === "*") return true;
    if (!PLACEHOLDER.test(p)) return asciiLower(p) === seg;
    const name = asciiLower(p);
    if (bind) {
      captured.set(name, seg);
      return true;
    }
    return captured.get(name) === seg;
  });
}

function kindOfTarget(targetId: string): BindingKind | undefined {
  return kindNamed(segments(targetId));
}

export type BindingVerdict = { allowed: true; rule?: BindingRule } | { allowed: false; reason: string };

export function checkBinding(rules: readonly BindingRule[], targetId: string, poolId: string): BindingVerdict {
  const kind = kindOfTarget(targetId);
  const forTarget = rules.filter(
    (r) => r.any || ((r.kind === "both" || r.kind === kind) && covers(r.target, targetId, new Map(), true)),
  );
  const rule = forTarget.find((r) => {
    if (r.any) return true;
    const captured = new Map<string, string>();
    return covers(r.target, targetId, captured, true) && covers(r.pool, poolId, captured, false);
  });
  if (rule) return { allowed: true, rule };
  if (forTarget.length === 0) return { allowed: false, reason: `no POOLSYNC_BINDINGS rule covers ${targetId}` };
  const named = forTarget.map((r) => `rule ${r.index} (${r.text})`).join(", ");
  return {
    allowed: false,
    reason: `${poolId} is not a pool POOLSYNC_BINDINGS lets ${targetId} join: ${named} allow${forTarget.length === 1 ? "s" : ""} other pools only`,
  };
}
