import { numberFlag, parseFlags, UsageError } from "../devkit/cliFlags";

export const USAGE = `usage: npm run bench -- [--quick] [--runs N] [--only W,W] [--strategies S,S] [--out DIR] [--reuse-azurite] [--azurite-port N] [--latency-minutes M] [--baseline REF] [--render] [--slow-operations] [--hosts N,N] [--host-ramp S] [--host-kills S,S] [--host-entry built|source] [--host-starts K]
  --quick            the small plan (minutes, not hours); results go to *.quick.* files
  --runs N           runs per strategy (default 1 quick, 3 full)
  --only W,W         only these workloads (contention, burstOne, burstWide, steady, scale, overhead, contentionFlex,
                     burstOneFlex, hosts, latency; coldstart and ipPools: run only when named)
  --strategies S,S   only these strategies (poolsync and the peers' names)
  --out DIR          write the results here instead of bench/
  --reuse-azurite    use the Azurite already running on the default ports instead of a fresh one of its own
  --azurite-port N   a fresh Azurite with blob on N, queue N+1, table N+2 (default: the bench's own fixed ports)
  --latency-minutes M  the latency workload's window per strategy, real minutes at 1x (default 10, quick 1.5)
  --baseline REF     coldstart: the commit whose deployment zip is measured beside this tree's (default main)
  --render           write RESULTS.md and the chart again from results.json, running nothing
  --slow-operations  the simulator's slow profile: scale set and instance writes take 30 s (default: every operation 2 s)
  --hosts N,N        the hosts section's host counts (default 1,2,4,8): to run one count again, e.g. to chase a run
  --host-ramp S      hosts section: each workload starts with one instance and adds the others evenly over its first
                     S real seconds, as the platform scales out into a burst (default 0: all at the start)
  --host-kills S,S   hosts section: at each of these real seconds into a workload, SIGKILL one instance that holds
                     messages (mid-invocation); its messages come back after their 30 s lease (default: none)
  --host-entry E     hosts section: what each instance runs, built (the JavaScript \`npm run build\` emits, built
                     first if the source changed; default) or source (bench/hostProcess.ts under tsx, twice the CPU)
  --host-starts K    hosts section: at most K instances starting at once, the next as one is ready (default 4)`;

export interface BenchOptions {
  quick: boolean;
  runs: number | undefined;
  only: string[] | undefined;
  strategies: string[] | undefined;
  out: string | undefined;
  reuseAzurite: boolean;
  azuritePort: number | undefined;
  latencyMinutes: number | undefined;
  baseline: string | undefined;
  render: boolean;
  slowOperations: boolean;
  /** The hosts section's host counts; undefined = all of HOST_COUNTS. */
  hosts: number[] | undefined;
  /** The hosts section's scale-out over the first seconds of each workload (real seconds; 0 = none). */
  hostRampS: number;
  /** The hosts section's kills, real seconds into each workload. */
  hostKillsS: number[];
  /** What the hosts section's instances run: the built hostProcess or the source one under tsx. */
  hostEntry: "built" | "source";
  /** The hosts section's instances starting at once, at most. */
  hostStarts: number;
  help: boolean;
}

const list = (raw: string | undefined) => (raw === undefined ? undefined : raw.split(",").filter((x) => x !== ""));

export function benchOptions(argv: readonly string[]): BenchOptions {
  const v = parseFlags(
    argv,
    {
      quick: { type: "boolean" },
      runs: { type: "string" },
      only: { type: "string" },
      strategies: { type: "string" },
      out: { type: "string" },
      "reuse-azurite": { type: "boolean" },
      "azurite-port": { type: "string" },
      "latency-minutes": { type: "string" },
      baseline: { type: "string" },
      render: { type: "boolean" },
      "slow-operations": { type: "boolean" },
      hosts: { type: "string" },
      "host-ramp": { type: "string" },
      "host-kills": { type: "string" },
      "host-entry": { type: "string" },
      "host-starts": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    USAGE,
  );
  return {
    quick: v.quick === true,
    runs: v.runs === undefined ? undefined : numberFlag("runs", v.runs, 1, USAGE, { whole: true }),
    only: list(v.only),
    strategies: list(v.strategies),
    out: v.out || undefined,
    reuseAzurite: v["reuse-azurite"] === true,
    azuritePort:
      v["azurite-port"] === undefined
        ? undefined
        : numberFlag("azurite-port", v["azurite-port"], 1, USAGE, { whole: true }),
    latencyMinutes:
      v["latency-minutes"] === undefined ? undefined : numberFlag("latency-minutes", v["latency-minutes"], 10, USAGE),
    baseline: v.baseline || undefined,
    render: v.render === true,
    slowOperations: v["slow-operations"] === true,
    hosts: list(v.hosts)?.map((h) => numberFlag("hosts", h, 1, USAGE, { whole: true })),
    hostRampS: v["host-ramp"] === undefined ? 0 : numberFlag("host-ramp", v["host-ramp"], 0, USAGE, { zero: true }),
    hostKillsS: (list(v["host-kills"]) ?? []).map((k) => numberFlag("host-kills", k, 0, USAGE, { zero: true })),
    hostEntry: hostEntry(v["host-entry"]),
    hostStarts:
      v["host-starts"] === undefined ? 4 : numberFlag("host-starts", v["host-starts"], 1, USAGE, { whole: true }),
    help: v.help === true,
  };
}

function hostEntry(raw: string | undefined): "built" | "source" {
  if (raw === undefined || raw === "built" || raw === "source") return raw ?? "built";
  throw new UsageError(`--host-entry is built or source, got "${raw}"\n${USAGE}`);
}
