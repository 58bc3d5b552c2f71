// The "many hosts" section of RESULTS.md: the wide burst and the contention workload with poolsync as 1, 2, 4 and 8
// Function hosts at once, against the targets (0 lost updates, 0 429s, 1 model write per scale set in the burst,
// convergence within 1.2 x the bound for every host count and no slower with the most hosts than with 1).
import type { Results } from "./report";
import { spread, type Spread } from "./stats";

export const HOST_COUNTS = [1, 2, 4, 8] as const;

type Agg = Record<string, { runs: unknown[]; summary: Record<string, Spread> }>;

const fmt = (n: number | undefined, digits = 1): string =>
  n === undefined || Number.isNaN(n)
    ? "–"
    : !Number.isFinite(n)
      ? "∞"
      : Number.isInteger(n)
        ? String(n)
        : n.toFixed(digits);
const sp = (s: Spread | undefined): string =>
  !s ? "–" : s.min === s.max ? fmt(s.median) : `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;
const ok = (good: boolean) => (good ? "met" : "**missed**");

interface Processes {
  hostsStarted: number;
  hostsNotStarted?: number;
  hostsKilled: number;
  killedHeld: number;
  rssMaxMB: number;
  /** Each instance's real seconds from fork to ready, and CPU seconds by then (since the built entry). */
  startS?: number[];
  startCpuS?: number[];
}
const processesOf = (run: unknown): Processes | undefined => (run as { processes?: Processes } | undefined)?.processes;
const instances = (run: unknown): string => {
  const p = processesOf(run);
  if (!p) return "–";
  const late = p.hostsNotStarted ? `, ${p.hostsNotStarted} not ready in time` : "";
  return `${p.hostsStarted} / ${p.hostsKilled} (${p.killedHeld})${late}`;
};

/** Median and slowest instance start, and the median CPU of a start, of one run. */
const starts = (run: unknown): string => {
  const p = processesOf(run);
  if (!p?.startS?.length) return "– | –";
  const cpu = spread(p.startCpuS ?? []).median;
  return `${fmt(spread(p.startS).median)} (${fmt(Math.max(...p.startS))}) | ${fmt(cpu)}`;
};

interface Schedule {
  rampS: number;
  killsS: number[];
  /** bench --host-entry and --host-starts (runs before them: tsx from source, all at once). */
  entry?: "built" | "source";
  maxStarting?: number;
}

/** How the hosts came and went in each workload (bench --host-ramp, --host-kills, --host-entry, --host-starts). */
function scheduleText(s: Schedule | undefined): string {
  const ramp =
    s && s.rampS > 0
      ? `Each workload started with one host and added the others evenly over its first ${fmt(s.rampS)} real seconds (each added host ready some seconds later: a process starting).`
      : "Every host started before each workload.";
  const kills =
    s && s.killsS.length > 0
      ? ` At ${s.killsS.map((k) => `${fmt(k)} s`).join(", ")} into each workload one host holding messages was SIGKILLed (mid-invocation; a host started in its place only when none was left); its messages came back after their lease.`
      : "";
  const entry = !s?.entry
    ? ""
    : ` Each instance ran ${s.entry === "built" ? "the built JavaScript (dist/bench/hostProcess.js)" : "bench/hostProcess.ts under tsx"}, ${s.maxStarting ? `at most ${s.maxStarting} starting at once (the next forked when one was ready)` : "all starting at once"}.`;
  return ramp + kills + entry;
}

export function renderHosts(r: Results): string {
  const w = r.workloads.hosts as
    | {
        burstWide: Agg & { bound?: { boundS: number } };
        contention: Agg;
        run?: { generatedAt: string; commit?: string; runs: number; durationS: number };
        schedule?: Schedule;
      }
    | undefined;
  if (!w) return "";
  const bound = w.burstWide.bound?.boundS ?? Number.NaN;
  // The counts this run measured (--hosts may name others than the default), in order.
  const measured = [...new Set([...Object.keys(w.burstWide), ...Object.keys(w.contention)])]
    .map(Number)
    .filter((h) => Number.isInteger(h) && h > 0)
    .sort((a, b) => a - b);
  const most = measured.at(-1) ?? 1;
  const counts = measured.length > 1 ? `${measured.slice(0, -1).join(", ")} and ${most}` : String(most);
  const out: string[] = ["", `## 6. Many hosts: the wide burst and the contention workload with ${counts} hosts`, ""];
  if (w.run)
    out.push(
      `Run on its own (\`npm run bench -- --only=hosts --runs=${w.run.runs}\`) at ${w.run.generatedAt}${w.run.commit ? ` on commit ${w.run.commit}` : ""}, ${fmt(w.run.durationS, 0)} s.`,
      "",
    );
  out.push(
    `Same sizes as 1 and 2b (plan: \`contention\`, \`burstWide\`). Each host is an OS process of its own (bench/hostProcess.ts, forked as \`npm run local --hosts\` forks its hosts), as Flex Consumption runs its instances: its own \`createServices\` (pacers, coalescer, in-process joining, memory), its own queue listener (batch 16, a new fetch at 8 or fewer in flight, a 30 s lease on each message) and its own event loop, all over the same tables, queue and simulator; ARM events go to the live hosts in turn, the timer runs on the first live one. ${scheduleText(w.schedule)} Targets: lost updates 0, 429s 0, model writes per scale set in the burst 1, convergence ≤ 1.2 × bound (${fmt(bound)} s) for every host count and no slower with ${most} hosts than with 1.`,
  );
  out.push("");
  out.push(
    "| hosts | burst converge s | × bound | max model writes / scale set | burst 412 | burst 429 | contention lost ours | contention lost theirs | contention model writes | contention 412 | contention 429 | burst instance start s, median (slowest) | CPU s a start, median | burst instances started / killed (messages they held) | largest instance MB |",
  );
  out.push("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const h of measured) {
    const b = w.burstWide[String(h)]?.summary;
    const c = w.contention[String(h)]?.summary;
    const conv = b?.convergeS?.median ?? Number.NaN;
    out.push(
      `| ${h} | ${sp(b?.convergeS)} | ${fmt(conv / bound, 2)} | ${sp(b?.maxModelWritesPerScaleSet)} | ${sp(b?.status412)} | ${sp(b?.status429)} | ${sp(c?.lostOurs)} | ${sp(c?.lostTheirs)} of ${sp(c?.theirOps)} | ${sp(c?.modelWrites)} | ${sp(c?.status412)} | ${sp(c?.status429)} | ${starts(w.burstWide[String(h)]?.runs[0])} | ${instances(w.burstWide[String(h)]?.runs[0])} | ${fmt(processesOf(w.burstWide[String(h)]?.runs[0])?.rssMaxMB)} |`,
    );
  }
  out.push("");
  const med = (a: Agg, h: number, f: string) => a[String(h)]?.summary[f]?.median ?? Number.NaN;
  const maxOver = (a: Agg, f: string) => Math.max(...measured.map((h) => a[String(h)]?.summary[f]?.max ?? Number.NaN));
  const lost = Math.max(maxOver(w.contention, "lostOurs"), maxOver(w.contention, "lostTheirs"));
  const throttled = Math.max(maxOver(w.contention, "status429"), maxOver(w.burstWide, "status429"));
  const writes = maxOver(w.burstWide, "maxModelWritesPerScaleSet");
  const worst = Math.max(...measured.map((h) => med(w.burstWide, h, "convergeS") / bound));
  const widest = med(w.burstWide, most, "convergeS");
  const one = med(w.burstWide, 1, "convergeS");
  out.push(
    `Targets: lost updates 0 — ${ok(lost === 0)} (worst ${fmt(lost)}); 429s 0 — ${ok(throttled === 0)} (worst ${fmt(throttled)}); one model write per scale set — ${ok(writes === 1)} (worst ${fmt(writes)}); convergence ≤ 1.2 × bound — ${ok(worst <= 1.2)} (worst ${fmt(worst, 2)} ×); ${most} hosts no slower than 1 — ${ok(widest <= one)} (${fmt(widest)} s vs ${fmt(one)} s).`,
  );
  out.push("");
  const countsOf = (h: number) =>
    (w.burstWide[String(h)]?.runs[0] as { notes?: { counts?: Record<string, number> } } | undefined)?.notes?.counts ??
    {};
  out.push(
    `In the burst (first run): ${measured
      .map((h) => {
        const c = countsOf(h);
        return `${h} host(s): ${c["reconcile:deferred"] ?? 0} reconciles deferred to the lease holder, ${c["reconcile:sent back for the intake"] ?? 0} passes sent back while the host took in declarations, ${c["arm.write:TransientError"] ?? 0} writes that timed out or found no answer (re-enqueued), ${c["reconcile:requeued"] ?? 0} reconciles re-enqueued`;
      })
      .join("; ")}.`,
  );
  out.push("");
  out.push(
    "The bound counts only ARM's and CRP's buckets and the profile's latency and operation time (see 2b); what poolsync spends in Azurite round trips, queue polls and the declare window is not in it, and on this machine (2 cores shared with other runs) that part varies from run to run: the 1-host row here and section 2b run the same workload and code, and differ by the machine's load. Compare host counts within this table, which ran one after another. Contention: the other writers keep writing while poolsync is behind, so a slower run meets more of their writes (more 412s, more model writes); what matters there is that nothing is lost and nothing is throttled.",
  );
  out.push("");
  return out.join("\n");
}
