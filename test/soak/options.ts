import { numberFlag, parseFlags } from "../../devkit/cliFlags";

export const USAGE = `usage: npm run soak -- [--seed N] [--minutes M] [--max-steps S] [--time-scale T] [--hosts N] [--plan]
  --seed N         the PRNG seed that decides every fault and step (default 1); a violation prints it to replay
  --minutes M      how long to run, real minutes (default 1)
  --max-steps S    stop after this many steps (default 10000)
  --time-scale T   simulator seconds per real second (default 60)
  --hosts N        Function hosts polling the queue at once, a kill taking one (default 1)
  --simple-events  deliver each ARM event once, 1 to 21 s late, instead of as Event Grid does (at least once, out of
                   order, some twice, some hours late on its retry schedule: the default)
  --plan           also print the plan of steps`;

export interface SoakFlags {
  seed: number;
  minutes: number;
  maxSteps: number;
  timeScale: number;
  hosts: number;
  eventDelivery: "eventGrid" | "simple";
  plan: boolean;
  help: boolean;
}

export function soakOptions(argv: readonly string[]): SoakFlags {
  const v = parseFlags(
    argv,
    {
      seed: { type: "string" },
      minutes: { type: "string" },
      "max-steps": { type: "string" },
      "time-scale": { type: "string" },
      hosts: { type: "string" },
      "simple-events": { type: "boolean" },
      plan: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    USAGE,
  );
  return {
    seed: numberFlag("seed", v.seed, 1, USAGE, { whole: true }),
    minutes: numberFlag("minutes", v.minutes, 1, USAGE),
    maxSteps: numberFlag("max-steps", v["max-steps"], 10_000, USAGE, { whole: true }),
    timeScale: numberFlag("time-scale", v["time-scale"], 60, USAGE),
    hosts: numberFlag("hosts", v.hosts, 1, USAGE, { whole: true, max: 16 }),
    eventDelivery: v["simple-events"] === true ? "simple" : "eventGrid",
    plan: v.plan === true,
    help: v.help === true,
  };
}
