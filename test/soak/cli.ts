// npm run soak -- --seed N --minutes M [--max-steps S] [--time-scale T] [--hosts N] [--plan]
// Prints the per-fault table and the counters; exits 1 on any violated invariant (with the seed to replay it).
import { UsageError } from "../../devkit/cliFlags";
import { soakOptions, USAGE } from "./options";
import { formatTable, runSoak } from "./soak";

async function main(): Promise<void> {
  const { seed, minutes, maxSteps, timeScale, hosts, eventDelivery, plan, help } = soakOptions(process.argv.slice(2));
  if (help) {
    console.log(USAGE);
    return;
  }
  console.log(
    `soak: seed ${seed}, ${minutes} min, at most ${maxSteps} steps, simulator time x${timeScale}, ${hosts} host(s), events ${eventDelivery === "eventGrid" ? "as Event Grid delivers them" : "simple"}`,
  );
  const r = await runSoak({
    seed,
    minutes,
    maxSteps,
    timeScale,
    hosts,
    eventDelivery,
    log: (l) => console.log(`  ${l}`),
  });
  console.log(`\n${r.steps} steps in ${r.realSeconds} s real (~${r.simulatedMinutes} simulated minutes)\n`);
  console.log(formatTable(r));
  console.log(`\ncounters: ${JSON.stringify(r.counters)}`);
  if (plan) console.log(`\nplan:\n${r.plan.join("\n")}`);
  if (r.violations.length > 0) {
    console.log(
      `\n${r.violations.length} VIOLATION(S) (replay: npm run soak -- --seed ${seed} --minutes ${minutes} --hosts ${hosts}${eventDelivery === "simple" ? " --simple-events" : ""}):`,
    );
    for (const v of r.violations) console.log(`  - ${v}`);
    process.exit(1);
  }
  console.log("\nall invariants held");
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err instanceof UsageError ? err.message : err);
  process.exit(err instanceof UsageError ? 2 : 1);
});
