import { numberFlag, parseFlags } from "../../devkit/cliFlags";

export const USAGE = `usage: npm run bench:timer -- [--entries 10000] [--stale-percent 1] [--runs 5] [--sweep-subscriptions 20] [--sweep-groups 5] [--sweep-per-group 50]
  --entries N              cached scale sets, every one declared (default 10000)
  --stale-percent P        of them invalidated before each run (default 1)
  --runs N                 runs, for the median and spread (default 5)
  --sweep-subscriptions N  the sweep's subscriptions (default 20)
  --sweep-groups N         resource groups per subscription (default 5)
  --sweep-per-group N      scale sets per resource group (default 50)`;

/** Strict flags: an unknown or malformed one is an error with the usage, never a run of another size. */
export function timerBenchOptions(argv: readonly string[]): {
  entries: number;
  stalePercent: number;
  runs: number;
  sweepSubscriptions: number;
  sweepGroups: number;
  sweepPerGroup: number;
  help: boolean;
} {
  const v = parseFlags(
    argv,
    {
      entries: { type: "string" },
      "stale-percent": { type: "string" },
      runs: { type: "string" },
      "sweep-subscriptions": { type: "string" },
      "sweep-groups": { type: "string" },
      "sweep-per-group": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    USAGE,
  );
  return {
    entries: numberFlag("entries", v.entries, 10_000, USAGE, { whole: true }),
    stalePercent: numberFlag("stale-percent", v["stale-percent"], 1, USAGE, { zero: true, max: 100 }),
    runs: numberFlag("runs", v.runs, 5, USAGE, { whole: true }),
    sweepSubscriptions: numberFlag("sweep-subscriptions", v["sweep-subscriptions"], 20, USAGE, { whole: true }),
    sweepGroups: numberFlag("sweep-groups", v["sweep-groups"], 5, USAGE, { whole: true }),
    sweepPerGroup: numberFlag("sweep-per-group", v["sweep-per-group"], 50, USAGE, { whole: true }),
    help: v.help === true,
  };
}
