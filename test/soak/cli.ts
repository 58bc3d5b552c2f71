// npm run soak -- --seed N --minutes M [--max-steps S] [--time-scale T] [--hosts N] [--plan]
// Prints the per-fault table and the counters; exits 1 on any violated invariant (with the seed to replay it).
import { formatTable, runSoak } from "./soak";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) {
    console.error(`--${name} needs a positive number, got ${process.argv[i + 1] ?? "nothing"}`);
    process.exit(2);
  }
  return v;
}

async function main(): Promise<void> {
  const seed = Math.floor(arg("seed", 1));
  const minutes = arg("minutes", 1);
  const maxSteps = Math.floor(arg("max-steps", 10_000));
  const timeScale = arg("time-scale", 60);
  const hosts = Math.floor(arg("hosts", 1));
  console.log(`soak: seed ${seed}, ${minutes} min, at most ${maxSteps} steps, simulator time x${timeScale}, ${hosts} host(s)`);
  const r = await runSoak({ seed, minutes, maxSteps, timeScale, hosts, log: (l) => console.log(`  ${l}`) });
  console.log(`\n${r.steps} steps in ${r.realSeconds} s real (~${r.simulatedMinutes} simulated minutes)\n`);
  console.log(formatTable(r));
  console.log(`\ncounters: ${JSON.stringify(r.counters)}`);
  if (process.argv.includes("--plan")) console.log(`\nplan:\n${r.plan.join("\n")}`);
  if (r.violations.length > 0) {
    console.log(`\n${r.violations.length} VIOLATION(S) (replay: npm run soak -- --seed ${seed} --minutes ${minutes}):`);
    for (const v of r.violations) console.log(`  - ${v}`);
    process.exit(1);
  }
  console.log("\nall invariants held");
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
