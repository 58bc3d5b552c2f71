// What starting one benchmark instance (bench/hostProcess.ts) costs, side by side in one run: under tsx from source,
// and the JavaScript `npm run build` emits, each with and without Node's compile cache (NODE_COMPILE_CACHE). Real
// ms from the fork to its ready message (services up, tables and queue there) and the CPU ms the instance had used by
// then, one instance at a time in turn (the variants interleaved, so a change in the machine's load falls on all of
// them), then `--together` instances of each variant forked at once.
//
//   npx tsx bench/instanceStart.ts [--azurite-port N] [--rounds R] [--together K]
//
// Its own Azurite on --azurite-port (default 23950) and its own simulator; nothing is written to bench/.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAzurite } from "../devkit/azurite";
import { numberFlag, parseFlags } from "../devkit/cliFlags";
import { buildHostEntry, HostProcesses, type HostEntry } from "./hostProcesses";
import { poolsyncEnv } from "./poolsyncRun";
import { prng, spread } from "./stats";
import { buildWorld, startSim } from "./world";

/** The median of the finite values (a start that never got ready is NaN). */
const median = (xs: number[]) => spread(xs).median;

const USAGE = "usage: npx tsx bench/instanceStart.ts [--azurite-port N] [--rounds R] [--together K]";

interface Variant {
  name: string;
  entry: HostEntry;
  compileCache: boolean;
}

const VARIANTS: Variant[] = [
  { name: "tsx, from source", entry: "source", compileCache: false },
  { name: "tsx, from source, compile cache", entry: "source", compileCache: true },
  { name: "built JavaScript", entry: "built", compileCache: false },
  { name: "built JavaScript, compile cache", entry: "built", compileCache: true },
];

interface Start {
  ms: number;
  cpuMs: number;
  rssMB: number;
}

async function main(): Promise<void> {
  const v = parseFlags(
    process.argv.slice(2),
    { "azurite-port": { type: "string" }, rounds: { type: "string" }, together: { type: "string" } },
    USAGE,
  );
  const port = v["azurite-port"] ? numberFlag("azurite-port", v["azurite-port"], 1, USAGE, { whole: true }) : 23950;
  const rounds = v.rounds ? numberFlag("rounds", v.rounds, 1, USAGE, { whole: true }) : 5;
  const together = v.together ? numberFlag("together", v.together, 1, USAGE, { whole: true }) : 8;
  buildHostEntry();
  const azurite = await ensureAzurite({ blob: port, queue: port + 1, table: port + 2 });
  const world = buildWorld({ subscriptions: 1, scaleSetsPerSubscription: 4, capacity: 2, pools: 2 });
  const sim = await startSim(
    { latency: { fixedMs: 5, jitterMs: 5 }, operationDurationMs: 1000, timeScale: 1 },
    world.seed,
    1,
  );
  // One cache folder per variant that uses it, fresh: the first start of each fills it (shown apart).
  const cacheDirs = new Map(VARIANTS.map((x) => [x.name, mkdtempSync(join(tmpdir(), "poolsync-compile-cache-"))]));
  const instances = (x: Variant, maxStarting?: number) =>
    new HostProcesses({
      start: {
        env: poolsyncEnv(sim, {
          storage: azurite.connectionString,
          subscriptions: world.subscriptions,
          events: false,
          eventDelayMs: 0,
          timerEveryMs: 0,
          random: prng(1),
        }),
        clock: { simAt: sim.control.clock.now(), realAt: Date.now(), timeScale: 1 },
        leaseSeconds: 30,
        visibilityTimeoutMs: 1000,
      },
      randomSeed: 1,
      onBatch: () => undefined,
      out: (line) => console.error(line),
      entry: x.entry,
      ...(x.compileCache ? { env: { NODE_COMPILE_CACHE: cacheDirs.get(x.name) ?? "" } } : {}),
      ...(maxStarting ? { maxStarting } : {}),
      readyTimeoutMs: 600_000,
    });
  const one = new Map<string, Start[]>(VARIANTS.map((x) => [x.name, []]));
  try {
    for (let r = 0; r < rounds; r++)
      for (const x of VARIANTS) {
        const hosts = instances(x);
        const [h] = await hosts.add(1);
        one
          .get(x.name)
          ?.push({ ms: h?.startMs ?? NaN, cpuMs: h?.startCpuMs ?? NaN, rssMB: (h?.rssBytes ?? 0) / 2 ** 20 });
        await hosts.stop(0);
      }
    const many: Array<{ name: string; allReadyS: number; cpuS: number; medianMs: number; maxMs: number }> = [];
    for (const x of VARIANTS) {
      const hosts = instances(x);
      const t0 = Date.now();
      const hs = await hosts.add(together);
      many.push({
        name: x.name,
        allReadyS: (Date.now() - t0) / 1000,
        cpuS: hs.reduce((n, h) => n + (h.startCpuMs ?? 0), 0) / 1000,
        medianMs: median(hs.map((h) => h.startMs ?? NaN)),
        maxMs: Math.max(...hs.map((h) => h.startMs ?? NaN)),
      });
      await hosts.stop(0);
    }
    const f = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : "–");
    console.log(
      `\nOne at a time, ${rounds} rounds, the variants in turn (the first start of a compile-cache variant fills it):\n`,
    );
    console.log("| variant | first start: ms to ready / CPU ms | median of the rest: ms to ready | CPU ms | RSS MB |");
    console.log("|---|---|---|---|---|");
    for (const x of VARIANTS) {
      const s = one.get(x.name) ?? [];
      const rest = s.slice(1);
      console.log(
        `| ${x.name} | ${f(s[0]?.ms ?? NaN)} / ${f(s[0]?.cpuMs ?? NaN)} | ${f(median(rest.map((r) => r.ms)))} | ${f(median(rest.map((r) => r.cpuMs)))} | ${f(median(rest.map((r) => r.rssMB)))} |`,
      );
    }
    console.log(`\n${together} forked at once (compile caches warm):\n`);
    console.log("| variant | all ready after s | median ms to ready | slowest ms | CPU s, all of them |");
    console.log("|---|---|---|---|---|");
    for (const m of many)
      console.log(
        `| ${m.name} | ${m.allReadyS.toFixed(1)} | ${f(m.medianMs)} | ${f(m.maxMs)} | ${m.cpuS.toFixed(1)} |`,
      );
  } finally {
    await sim.stop();
    await azurite.stop();
    for (const d of cacheDirs.values()) rmSync(d, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
