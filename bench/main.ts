// `npm run bench` (full) or `npm run bench -- --quick`: every workload (contention, bursts, steady, latency, scale,
// overhead) against the ARM simulator with CRP's throttling on (time-scaled), poolsync next to its peers' strategies in
// the same run; writes bench/results.json, bench/RESULTS.md and bench/convergence.svg, and prints a summary.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureAzurite } from "../devkit/azurite";
import { UsageError } from "../devkit/cliFlags";
import { benchOptions, USAGE, type BenchOptions } from "./options";
import { buildHostEntry } from "./hostProcesses";
import { HOST_COUNTS, renderHosts } from "./hostsReport";
import { runOverheadFresh } from "./overhead";
import { lastColdStartSection, runColdStart, writeColdStartSection } from "./coldstart";
import { IP_POOLS_SIZE, lastIpPoolsSection, runIpPools, writeIpPoolsSection } from "./ipPools";
import { renderMarkdown, renderSvg, summaryLines, type Results } from "./report";
import { summarise } from "./stats";
import { measuredCommit } from "./measuredCommit";
import type { SimProfile } from "./world";
import type { HostSchedule } from "./poolsyncRun";
import {
  burstBound,
  latencySize,
  PEERS,
  runBurst,
  runContention,
  runScale,
  runSteady,
  type BurstSize,
  type ContentionSize,
  type Env,
  type ScaleSize,
  type SteadySize,
  type Strategy,
} from "./workloads";

interface Plan {
  mode: "quick" | "full";
  runs: number;
  contention: ContentionSize;
  burstOne: BurstSize;
  burstWide: BurstSize;
  steady: SteadySize;
  /** The steady workload's arrival process for a few real minutes at 1x, every strategy (see latencySize). */
  latency: SteadySize;
  scale: ScaleSize;
  overheadMessages: number;
  only?: string[];
}

const BENCH_AZURITE_PORTS = { blob: 10110, queue: 10111, table: 10112 };

const PROFILE = { latency: { fixedMs: 100, jitterMs: 150 }, operationDurationMs: 2_000 };

function plan(opts: BenchOptions): Plan {
  const base: Omit<Plan, "latency"> & Partial<Pick<Plan, "latency">> = opts.quick
    ? {
        mode: "quick",
        runs: 1,
        contention: {
          changes: 40,
          capacity: 2,
          arrivalGapMs: 3_000,
          writers: 3,
          writerGapMs: 20_000,
          timeScale: 120,
          poolsyncTimeScale: 20,
        },
        burstOne: { scaleSets: 1, capacity: 3, perScaleSet: 20, timeScale: 30, poolsyncTimeScale: 1 },
        burstWide: { scaleSets: 10, capacity: 3, perScaleSet: 5, timeScale: 20, poolsyncTimeScale: 1 },
        steady: {
          scaleSets: 20,
          capacity: 2,
          changes: 100,
          durationMs: 15 * 60_000,
          writers: 3,
          writerGapMs: 3 * 60_000,
          timeScale: 120,
          poolsyncTimeScale: 20,
        },
        scale: {
          subscriptions: 5,
          groupsPerSubscription: 2,
          scaleSetsPerSubscription: 100,
          changes: 20,
          timeScale: 60,
        },
        overheadMessages: 5,
      }
    : {
        mode: "full",
        runs: 3,
        contention: {
          changes: 200,
          capacity: 3,
          arrivalGapMs: 3_000,
          writers: 3,
          writerGapMs: 20_000,
          timeScale: 150,
          poolsyncTimeScale: 30,
        },
        burstOne: { scaleSets: 1, capacity: 10, perScaleSet: 50, timeScale: 30, poolsyncTimeScale: 1 },
        burstWide: { scaleSets: 50, capacity: 10, perScaleSet: 10, timeScale: 20, poolsyncTimeScale: 1 },
        steady: {
          scaleSets: 100,
          capacity: 3,
          changes: 1000,
          durationMs: 60 * 60_000,
          writers: 3,
          writerGapMs: 3 * 60_000,
          timeScale: 240,
          poolsyncTimeScale: 30,
        },
        scale: {
          subscriptions: 20,
          groupsPerSubscription: 5,
          scaleSetsPerSubscription: 250,
          changes: 100,
          timeScale: 60,
        },
        overheadMessages: 20,
      };
  base.latency = latencySize(base.steady, opts.latencyMinutes ?? (opts.quick ? 1.5 : 10));
  if (opts.runs !== undefined) base.runs = opts.runs;
  if (opts.only) base.only = opts.only;
  return base as Plan;
}

/** `--render`: RESULTS.md and the chart again from results.json (the bounds recomputed), without running anything. */
function render(p: Plan, opts: BenchOptions): void {
  const dir = outDir(opts);
  const file = (name: string) => path.join(dir, p.mode === "quick" ? name.replace(/(\.\w+)$/, ".quick$1") : name);
  const results = JSON.parse(readFileSync(file("results.json"), "utf8")) as Results;
  const profile = (results.profile as Omit<SimProfile, "timeScale"> | undefined) ?? PROFILE;
  for (const key of ["burstOne", "burstWide"] as const) {
    const w = results.workloads[key] as { bound?: unknown } | undefined;
    if (w) w.bound = burstBound(results.plan[key] as BurstSize, profile, 1000);
  }
  // The hosts section runs the wide burst too, with its own copy of the bound.
  const hosts = results.workloads.hosts as { burstWide?: { bound?: unknown } } | undefined;
  if (hosts?.burstWide) hosts.burstWide.bound = burstBound(results.plan.burstWide as BurstSize, profile, 1000);
  writeFileSync(file("results.json"), JSON.stringify(results, null, 2) + "\n");
  writeFileSync(file("convergence.svg"), renderSvg(results));
  writeFileSync(
    file("RESULTS.md"),
    renderMarkdown(results, path.basename(file("convergence.svg"))) +
      renderHosts(results) +
      lastIpPoolsSection(dir) +
      lastColdStartSection(dir),
  );
  for (const line of summaryLines(results)) console.log(line);
}

function outDir(opts: BenchOptions): string {
  return opts.out
    ? path.resolve(opts.out)
    : __dirname.includes(`${path.sep}dist${path.sep}`)
      ? path.resolve(__dirname, "../../bench")
      : __dirname;
}

async function main(): Promise<void> {
  const opts = benchOptions(process.argv.slice(2));
  if (opts.help) return console.log(USAGE);
  const p = plan(opts);
  if (opts.render) return render(p, opts);
  const started = Date.now();
  const log = (line: string) =>
    console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
  // Its own Azurite, started fresh on ports of its own: one that ran a test suite for an hour answers several
  // times slower (its in-memory store keeps growing), which would be measured as poolsync's overhead.
  // --azurite-port N: blob on N, queue N+1, table N+2 (another benchmark on this machine may hold the default ones).
  const ports =
    opts.azuritePort !== undefined
      ? { blob: opts.azuritePort, queue: opts.azuritePort + 1, table: opts.azuritePort + 2 }
      : BENCH_AZURITE_PORTS;
  const azurite = await ensureAzurite(opts.reuseAzurite ? undefined : ports);
  log(
    `Azurite ${azurite.owned ? "started" : "reused"} on ${azurite.ports.table}; mode ${p.mode}, ${p.runs} run(s) per strategy`,
  );
  // --slow-operations: the simulator's slow profile (scale set and instance writes 30 s; the burst bounds count them).
  const profile = opts.slowOperations ? { ...PROFILE, scaleSetWriteMs: 30_000, instanceWriteMs: 30_000 } : PROFILE;
  const env: Env = { storage: azurite.connectionString, profile, log };
  const want = (w: string) => !p.only || p.only.includes(w);
  if (p.only?.includes("coldstart")) {
    // Its own figures (bench/coldstart.json) and its own section of RESULTS.md: the other sections stay as they are.
    try {
      const res = await runColdStart(azurite.connectionString, opts.runs ?? 5, opts.baseline ?? "main", log);
      const dir = outDir(opts);
      writeFileSync(path.join(dir, "coldstart.json"), JSON.stringify(res, null, 2) + "\n");
      writeColdStartSection(path.join(dir, "RESULTS.md"), res);
      log(`wrote ${path.join(dir, "coldstart.json")} and the cold-start section of ${path.join(dir, "RESULTS.md")}`);
    } finally {
      if (p.only.length === 1) await azurite.stop();
    }
    if (p.only.length === 1) return;
    p.only = p.only.filter((w) => w !== "coldstart");
  }
  if (p.only?.includes("ipPools")) {
    // Issue 43's IP-based pool: its own figures (bench/ipPools.json) and its own section of RESULTS.md, like coldstart.
    try {
      const res = await runIpPools(azurite.connectionString, IP_POOLS_SIZE, log);
      const dir = outDir(opts);
      writeFileSync(path.join(dir, "ipPools.json"), JSON.stringify(res, null, 2) + "\n");
      writeIpPoolsSection(path.join(dir, "RESULTS.md"), res);
      log(`wrote ${path.join(dir, "ipPools.json")} and the IP-based pool section of ${path.join(dir, "RESULTS.md")}`);
    } finally {
      if (p.only.length === 1) await azurite.stop();
    }
    if (p.only.length === 1) return;
    p.only = p.only.filter((w) => w !== "ipPools");
  }
  const pick = (xs: Strategy[]) => (opts.strategies ? xs.filter((x) => opts.strategies!.includes(x)) : xs);
  const all: Strategy[] = pick([...PEERS, "poolsync"]);
  const results: Results = {
    generatedAt: new Date().toISOString(),
    commit: measuredCommit(),
    mode: p.mode,
    runs: p.runs,
    machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}` },
    profile,
    plan: {
      contention: p.contention,
      contentionFlex: { ...p.contention, flexible: true },
      burstOne: p.burstOne,
      burstOneFlex: { ...p.burstOne, flexible: true },
      burstWide: p.burstWide,
      steady: p.steady,
      latency: p.latency,
      scale: p.scale,
      overheadMessages: p.overheadMessages,
    },
    workloads: {},
    durationS: 0,
  };
  try {
    if (want("contention")) {
      const per: Record<string, unknown[]> = {};
      for (let r = 0; r < p.runs; r++) {
        for (const s of all) {
          const res = await runContention(s, env, p.contention, 1000 + r);
          (per[s] ??= []).push(res);
          log(
            `contention run ${r + 1} ${s}: lost ours ${res.lostOurs}, theirs ${res.lostTheirs}/${res.theirOps}, model writes ${res.modelWrites}, 429 ${res.status429}, ${res.simMinutes.toFixed(0)} sim min`,
          );
        }
      }
      results.workloads.contention = aggregate(per, CONTENTION_FIELDS);
    }
    // The same contention and burst on a Flexible scale set: poolsync only (the peers speak the VMSS VM API).
    if (want("contentionFlex") && all.includes("poolsync")) {
      const per: Record<string, unknown[]> = {};
      for (let r = 0; r < p.runs; r++) {
        const res = await runContention("poolsync", env, { ...p.contention, flexible: true }, 1000 + r);
        (per.poolsync ??= []).push(res);
        log(
          `contentionFlex run ${r + 1}: lost ours ${res.lostOurs}, theirs ${res.lostTheirs}/${res.theirOps}, model writes ${res.modelWrites}, NIC writes ${res.instanceWrites}, 412 ${res.status412}, 429 ${res.status429}, ${res.simMinutes.toFixed(0)} sim min`,
        );
      }
      results.workloads.contentionFlex = aggregate(per, CONTENTION_FIELDS);
    }
    if (want("burstOneFlex") && all.includes("poolsync")) {
      const per: Record<string, unknown[]> = {};
      for (let r = 0; r < p.runs; r++) {
        const res = await runBurst("poolsync", env, { ...p.burstOne, flexible: true }, 2000 + r);
        (per.poolsync ??= []).push(res);
        log(
          `burstOneFlex run ${r + 1}: converged ${res.converged}/${res.changes} in ${res.convergeS.toFixed(1)} s sim, model writes ${res.modelWrites}, NIC writes ${res.instanceWrites}, reads ${res.reads}, 412 ${res.status412}, 429 ${res.status429}`,
        );
      }
      results.workloads.burstOneFlex = aggregate(per, BURST_FIELDS);
    }
    for (const [key, size] of [
      ["burstOne", p.burstOne],
      ["burstWide", p.burstWide],
    ] as const) {
      if (!want(key)) continue;
      const per: Record<string, unknown[]> = {};
      for (let r = 0; r < p.runs; r++) {
        for (const s of all) {
          const res = await runBurst(s, env, size, 2000 + r);
          (per[s] ??= []).push(res);
          log(
            `${key} run ${r + 1} ${s}: converged ${res.converged}/${res.changes} in ${res.convergeS.toFixed(1)} s sim (p50 ${res.p50S.toFixed(1)}, p99 ${res.p99S.toFixed(1)}), model writes ${res.modelWrites}, instance writes ${res.instanceWrites}, reads ${res.reads}, 412 ${res.status412}, 429 ${res.status429}`,
          );
        }
      }
      const agg = aggregate(per, BURST_FIELDS);
      results.workloads[key] = { ...agg, bound: burstBound(size, profile, 1000) };
    }
    if (want("steady")) {
      const per: Record<string, unknown[]> = {};
      const variants: Strategy[] = pick([...PEERS, "poolsync", "poolsync-ttl-only", "poolsync-no-cache"]);
      // Two runs at most: each variant simulates a whole hour.
      for (let r = 0; r < Math.min(p.runs, 2); r++) {
        for (const s of variants) {
          const res = await runSteady(s, env, p.steady, 3000 + r);
          (per[s] ??= []).push(res);
          log(
            `steady run ${r + 1} ${s}: reads/change ${res.readsPerChange.toFixed(2)} (with polls ${res.readsPerChangeInclPolls.toFixed(2)}), converged ${res.converged}/${res.changes}, writes ${res.modelWrites}+${res.instanceWrites}, 429 ${res.status429}`,
          );
        }
      }
      results.workloads.steady = aggregate(per, [
        "changes",
        "readsPerChange",
        "readsPerChangeInclPolls",
        "reads",
        "modelWrites",
        "instanceWrites",
        "status412",
        "status429",
        "converged",
        "p50S",
        "p99S",
        "tableOpsPerChange",
      ]);
    }
    if (want("latency")) {
      // poolsync and the peers at 1x, one after another, the same seeded arrivals: declare-to-visible-everywhere in
      // real seconds for everyone (only "poolsync": the variants are about reads, measured in the steady hour).
      const per: Record<string, unknown[]> = {};
      const latencyStrategies: Strategy[] = pick([...PEERS, "poolsync", "poolsync-no-window"]);
      for (let r = 0; r < Math.min(p.runs, 2); r++) {
        for (const s of latencyStrategies) {
          const res = await runSteady(s, env, p.latency, 3000 + r);
          (per[s] ??= []).push(res);
          log(
            `latency run ${r + 1} ${s}: p50 ${res.p50S.toFixed(1)} s, p99 ${res.p99S.toFixed(1)} s, converged ${res.converged}/${res.changes}, reads/change ${res.readsPerChange.toFixed(2)}, 429 ${res.status429}`,
          );
        }
      }
      results.workloads.latency = aggregate(per, [
        "changes",
        "converged",
        "p50S",
        "p99S",
        "readsPerChange",
        "modelWrites",
        "instanceWrites",
        "status412",
        "status429",
      ]);
    }
    if (want("scale")) {
      const res = await runScale(env, p.scale, 4000);
      log(
        `scale: ${res.scaleSets} scale sets in ${res.resourceGroups} resource groups; cold sweep ${JSON.stringify(res.sweeps.cold)}; warm sweep ${JSON.stringify(res.sweeps.warm)}; ${res.readsPerHour} reads an hour; ${res.tableOpsPerChange.toFixed(1)} table ops per change`,
      );
      results.workloads.scale = res;
    }
    if (want("hosts")) {
      // The wide burst and the contention workload with poolsync as 1, 2, 4 and 8 hosts at once, each host a process
      // of its own, added over the ramp and killed at the given seconds.
      const burst: Record<string, unknown[]> = {};
      const contention: Record<string, unknown[]> = {};
      // Built JavaScript starts an instance on less than half the CPU of tsx (bench/instanceStart.ts); a few at a time
      // get the first ones ready sooner than all of them at once on these cores.
      if (opts.hostEntry === "built") buildHostEntry();
      const schedule = (hosts: number): HostSchedule => ({
        ...(opts.hostRampS > 0 && hosts > 1 ? { startWith: 1, addEveryMs: (opts.hostRampS * 1000) / (hosts - 1) } : {}),
        killAtMs: opts.hostKillsS.map((s) => s * 1000),
        start: { entry: opts.hostEntry, maxStarting: opts.hostStarts },
      });
      for (let r = 0; r < Math.min(p.runs, 2); r++) {
        for (const hosts of opts.hosts ?? HOST_COUNTS) {
          const b = await runBurst("poolsync", env, p.burstWide, 2000 + r, hosts, schedule(hosts));
          (burst[String(hosts)] ??= []).push(b);
          log(
            `hosts ${hosts} burstWide run ${r + 1}: converged ${b.converged}/${b.changes} in ${b.convergeS.toFixed(1)} s sim, max model writes/scale set ${b.maxModelWritesPerScaleSet}, 412 ${b.status412}, 429 ${b.status429}, instances ${JSON.stringify(b.processes)}, unconverged ${JSON.stringify(b.unconverged).slice(0, 400)}`,
          );
          const c = await runContention("poolsync", env, p.contention, 1000 + r, hosts, schedule(hosts));
          (contention[String(hosts)] ??= []).push(c);
          log(
            `hosts ${hosts} contention run ${r + 1}: lost ours ${c.lostOurs}, theirs ${c.lostTheirs}/${c.theirOps}, model writes ${c.modelWrites}, 412 ${c.status412}, 429 ${c.status429}, instances ${JSON.stringify(c.processes)}`,
          );
        }
      }
      results.workloads.hosts = {
        burstWide: {
          ...aggregate(burst, [
            "convergeS",
            "p50S",
            "p99S",
            "modelWrites",
            "maxModelWritesPerScaleSet",
            "instanceWrites",
            "reads",
            "status412",
            "status429",
            "converged",
            "changes",
          ]),
          bound: burstBound(p.burstWide, profile, 1000),
        },
        contention: aggregate(contention, CONTENTION_FIELDS),
        schedule: {
          rampS: opts.hostRampS,
          killsS: opts.hostKillsS,
          entry: opts.hostEntry,
          maxStarting: opts.hostStarts,
        },
      };
    }
    if (want("overhead")) {
      const res = await runOverheadFresh(azurite.connectionString, p.overheadMessages, 5000);
      log(
        `overhead: cold ${res.cold.cpuMsMedian.toFixed(1)} ms CPU, ${res.cold.tableOpsMedian} table ops; warm ${res.warm.cpuMsMedian.toFixed(1)} ms CPU, ${res.warm.tableOpsMedian} table ops per message`,
      );
      results.workloads.overhead = res;
    }
  } finally {
    await azurite.stop();
  }
  results.durationS = (Date.now() - started) / 1000;
  const dir = outDir(opts);
  mkdirSync(dir, { recursive: true });
  const file = (name: string) => path.join(dir, p.mode === "quick" ? name.replace(/(\.\w+)$/, ".quick$1") : name);
  if (p.only) {
    // Some workloads only: the others keep the figures of the run that made them.
    try {
      const before = JSON.parse(readFileSync(file("results.json"), "utf8")) as Results;
      // Per strategy too: a run with --strategies keeps the other strategies' figures of the workload.
      const merged = { ...before.workloads };
      for (const [w, figures] of Object.entries(results.workloads))
        merged[w] =
          opts.strategies && before.workloads[w]
            ? { ...(before.workloads[w] as object), ...(figures as object) }
            : figures;
      results.workloads = merged;
      results.plan = { ...before.plan, ...results.plan };
      // The header describes the run that made the other sections; this one says when and how it ran.
      const partial = {
        generatedAt: results.generatedAt,
        commit: results.commit,
        runs: results.runs,
        durationS: (Date.now() - started) / 1000,
        only: p.only,
      };
      for (const w of p.only)
        if (results.workloads[w]) results.workloads[w] = { ...(results.workloads[w] as object), run: partial };
      Object.assign(results, {
        generatedAt: before.generatedAt,
        commit: before.commit,
        runs: before.runs,
        durationS: before.durationS,
      });
    } catch {
      // no earlier results: these alone
    }
  }
  writeFileSync(file("results.json"), JSON.stringify(results, null, 2) + "\n");
  writeFileSync(file("convergence.svg"), renderSvg(results));
  writeFileSync(
    file("RESULTS.md"),
    renderMarkdown(results, path.basename(file("convergence.svg"))) +
      renderHosts(results) +
      lastIpPoolsSection(dir) +
      lastColdStartSection(dir),
  );
  for (const line of summaryLines(results)) console.log(line);
  log(
    `wrote ${file("results.json")}, ${file("RESULTS.md")}, ${file("convergence.svg")} in ${results.durationS.toFixed(0)} s`,
  );
}

/** The figures summarised over the runs of a contention workload, and of a burst. */
const CONTENTION_FIELDS = [
  "lostOurs",
  "lostTheirs",
  "theirOps",
  "modelWrites",
  "instanceWrites",
  "reads",
  "status412",
  "status429",
  "simMinutes",
];
const BURST_FIELDS = [
  "convergeS",
  "p50S",
  "p99S",
  "modelWrites",
  "maxModelWritesPerScaleSet",
  "instanceWrites",
  "reads",
  "operationPolls",
  "status412",
  "status429",
  "converged",
  "tableOpsPerChange",
];

/** Per strategy: the runs as they were, and the median with its spread of each named figure. */
function aggregate(
  per: Record<string, unknown[]>,
  fields: string[],
): Record<string, { runs: unknown[]; summary: Record<string, unknown> }> {
  const out: Record<string, { runs: unknown[]; summary: Record<string, unknown> }> = {};
  for (const [s, runs] of Object.entries(per)) {
    const records = runs.map((r) =>
      Object.fromEntries(fields.map((f) => [f, Number((r as Record<string, unknown>)[f] ?? Number.NaN)])),
    );
    out[s] = { runs, summary: summarise(records) };
  }
  return out;
}

// Exit once the results are written: after a 1x run some handle (not yet identified) keeps the event loop alive for
// minutes after every simulator, strategy and Azurite has been stopped.
main()
  .then(() => process.exit(0))
  .catch((err: unknown) => {
    console.error(err instanceof UsageError ? err.message : err);
    process.exit(err instanceof UsageError ? 2 : 1);
  });
