import { ok, refuse, type Result } from "./result";

/**
 * POOLSYNC_BINDINGS: which targets may join which backend pools. A rule is `target => pool`, each side an ARM ID
 * prefix compared segment by segment (ASCII case-insensitive), where a `*` segment matches any one segment. A
 * declaration is allowed when some rule's target prefix covers its scale set and that same rule's pool prefix covers
 * its pool; `present` and `absent` alike, since removing a pool poolsync never added is as much a change as adding one.
 * No rules at all = every in-scope pairing (POOLSYNC_SCOPES still bounds everything).
 */

export interface BindingRule {
  /** 1-based position in the setting, as a person counts. */
  index: number;
  text: string;
  target: string[];
  pool: string[];
}

const segments = (id: string) => id.split("/").filter((s) => s.length > 0);
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));

function parsePrefix(side: string, what: string): Result<string[]> {
  const trimmed = side.trim();
  if (!trimmed.startsWith("/subscriptions/")) return refuse(`${what} "${trimmed}" must be an ARM ID prefix starting with /subscriptions/`);
  // eslint-disable-next-line no-control-regex
  if (/[^\x21-\x7e]/.test(trimmed)) return refuse(`${what} "${trimmed}" may hold only printable ASCII without spaces`);
  const segs = segments(trimmed);
  if (segs.some((s) => s === "." || s === "..")) return refuse(`${what} "${trimmed}" must not contain "." or ".." segments`);
  if (segs.some((s) => s.includes("*") && s !== "*")) return refuse(`${what} "${trimmed}": "*" stands for a whole segment, not part of one`);
  return ok(segs);
}

/** Rules separated by ";" or new lines; `target => pool` each. */
export function parseBindings(input: string): Result<BindingRule[]> {
  const parts = input
    .split(/[;\n]/)
    .map((p) => p.trim())
    .filter(Boolean);
  const rules: BindingRule[] = [];
  for (const [i, text] of parts.entries()) {
    const sides = text.split("=>");
    if (sides.length !== 2) return refuse(`rule ${i + 1} "${text}" must be "<target prefix> => <pool prefix>"`);
    const target = parsePrefix(sides[0] ?? "", `rule ${i + 1} target`);
    if (!target.ok) return target;
    const pool = parsePrefix(sides[1] ?? "", `rule ${i + 1} pool`);
    if (!pool.ok) return pool;
    rules.push({ index: i + 1, text: `${sides[0]!.trim()} => ${sides[1]!.trim()}`, target: target.value, pool: pool.value });
  }
  return ok(rules);
}

function covers(prefix: string[], id: string): boolean {
  const segs = segments(id);
  if (segs.length < prefix.length) return false;
  return prefix.every((p, i) => p === "*" || asciiLower(p) === asciiLower(segs[i] ?? ""));
}

export type BindingVerdict = { allowed: true; rule?: BindingRule } | { allowed: false; reason: string };

export function checkBinding(rules: readonly BindingRule[], targetId: string, poolId: string): BindingVerdict {
  if (rules.length === 0) return { allowed: true };
  const forTarget = rules.filter((r) => covers(r.target, targetId));
  const rule = forTarget.find((r) => covers(r.pool, poolId));
  if (rule) return { allowed: true, rule };
  if (forTarget.length === 0) return { allowed: false, reason: `no POOLSYNC_BINDINGS rule covers ${targetId}` };
  const named = forTarget.map((r) => `rule ${r.index} (${r.text})`).join(", ");
  return {
    allowed: false,
    reason: `${poolId} is not a pool POOLSYNC_BINDINGS lets ${targetId} join: ${named} allow${forTarget.length === 1 ? "s" : ""} other pools only`,
  };
}
