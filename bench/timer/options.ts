import { numberFlag, parseFlags } from "../../test/support/cliFlags";

export const USAGE = `usage: npm run bench:timer -- [--entries 10000] [--stale-percent 1] [--runs 5]
  --entries N        cached scale sets, every one declared (default 10000)
  --stale-percent P  of them invalidated before each run (default 1)
  --runs N           runs, for the median and spread (default 5)`;

/** Strict flags: an unknown or malformed one is an error with the usage, never a run of another size. */
export function timerBenchOptions(argv: readonly string[]): { entries: number; stalePercent: number; runs: number; help: boolean } {
  const v = parseFlags(
    argv,
    { entries: { type: "string" }, "stale-percent": { type: "string" }, runs: { type: "string" }, help: { type: "boolean", short: "h" } },
    USAGE,
  );
  return {
    entries: numberFlag("entries", v.entries, 10_000, USAGE, { whole: true }),
    stalePercent: numberFlag("stale-percent", v["stale-percent"], 1, USAGE, { zero: true, max: 100 }),
    runs: numberFlag("runs", v.runs, 5, USAGE, { whole: true }),
    help: v.help === true,
  };
}
