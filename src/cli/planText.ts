/** A plan (GET /api/plan, or a dry run's) for the terminal: one line per write, then each ip configuration's change. */

/** What a plan was computed from, in words (the cache, ARM, some of each, or nothing read). */
const BASED_ON: Record<string, string> = {
  cache: "the cache",
  arm: "ARM",
  mixed: "the cache and ARM",
  none: "nothing read",
};

interface PlanLike {
  targetId: string;
  declarations: number;
  writes: {
    kind: string;
    id: string;
    ifMatch: string;
    ipConfigurations: { nicConfiguration: string; ipConfiguration: string; gain: string[]; lose: string[] }[];
    /** A pool write (an IP-based pool's own address list). */
    addresses?: { gain: string[]; lose: string[] };
    basedOn: { source: string; ageMs: number };
  }[];
  skipped?: { backendPoolId: string; ipConfiguration: string; reason: string }[];
  unplaceable?: { backendPoolId: string; ipConfiguration: string; reason: string }[];
  basedOn: { source: string; oldestAgeMs: number };
  reads?: { made: number; limit: number; cutShort: boolean; notRead?: string[]; notReadCount?: number };
}

export function formatPlan(p: PlanLike): string {
  const lines = [
    `plan for ${p.targetId}: ${p.writes.length === 0 ? "nothing to write" : `${p.writes.length} write${p.writes.length === 1 ? "" : "s"}`} (${p.declarations} declaration${p.declarations === 1 ? "" : "s"}; based on ${BASED_ON[p.basedOn.source] ?? p.basedOn.source}, oldest ${Math.round(p.basedOn.oldestAgeMs / 1000)} s old)`,
  ];
  for (const w of p.writes) {
    lines.push(
      `  ${w.kind} ${w.id}  If-Match ${w.ifMatch}  (${w.basedOn.source}, ${Math.round(w.basedOn.ageMs / 1000)} s old)`,
    );
    for (const c of w.ipConfigurations) {
      for (const g of c.gain) lines.push(`    ${c.nicConfiguration}/${c.ipConfiguration}  + ${g}`);
      for (const l of c.lose) lines.push(`    ${c.nicConfiguration}/${c.ipConfiguration}  - ${l}`);
    }
    for (const g of w.addresses?.gain ?? []) lines.push(`    address  + ${g}`);
    for (const l of w.addresses?.lose ?? []) lines.push(`    address  - ${l}`);
  }
  for (const s of p.skipped ?? [])
    lines.push(`  not written: ${s.backendPoolId} (${s.ipConfiguration || "primary"}): ${s.reason}`);
  for (const u of p.unplaceable ?? [])
    lines.push(`  would fail: ${u.backendPoolId} (${u.ipConfiguration || "primary"}): ${u.reason}`);
  const r = p.reads;
  if (r?.cutShort) {
    const count = r.notReadCount ?? r.notRead?.length ?? 0;
    lines.push(
      `  partial plan: the bound of ${r.limit} ARM reads (POOLSYNC_PLAN_MAX_READS) left ${count} resource${count === 1 ? "" : "s"} unread and unplanned:`,
    );
    for (const id of r.notRead ?? []) lines.push(`    not read: ${id}`);
    if (count > (r.notRead?.length ?? 0)) lines.push(`    and ${count - (r.notRead?.length ?? 0)} more`);
  }
  return lines.join("\n");
}

export function formatDryRun(d: {
  wouldStore: { state: string; backendPoolId: string; targetId: string };
  plan: PlanLike;
}): string {
  return [
    `dry run: nothing stored, queued or written`,
    `would store: ${d.wouldStore.state} ${d.wouldStore.backendPoolId} on ${d.wouldStore.targetId}`,
    formatPlan(d.plan),
  ].join("\n");
}
