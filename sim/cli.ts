// `npm run sim -- --port 18443 --seed demo` : serves the simulator until SIGINT/SIGTERM.
import { readFileSync } from "node:fs";
import { parseArgs as parseFlags } from "node:util";
import { startArmSimulator, type ArmSimulatorOptions, type SeedSpec } from "./index";

const USAGE = `usage: npm run sim -- [--port 18443] [--host 127.0.0.1] [--seed demo|file.json] [--tls]
  [--time-scale N] [--throttling] [--operation-duration-ms N] [--latency-ms N] [--jitter-ms N]
  [--conflict-while-operation-in-progress] [--list-page-size N] [--instance-propagation-ms N] [--random-seed N]`;

/** A flag the simulator cannot use: the process exits 2 with the usage. */
export class UsageError extends Error {
  override name = "UsageError";
}

const OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  seed: { type: "string" },
  tls: { type: "boolean" },
  "time-scale": { type: "string" },
  throttling: { type: "boolean" },
  "operation-duration-ms": { type: "string" },
  "latency-ms": { type: "string" },
  "jitter-ms": { type: "string" },
  "conflict-while-operation-in-progress": { type: "boolean" },
  "list-page-size": { type: "string" },
  "instance-propagation-ms": { type: "string" },
  "random-seed": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * The simulator's options from its flags; an unknown flag, a missing value or a value that is not a number is an error
 * with the usage.
 */
export function parseArgs(argv: string[]): ArmSimulatorOptions & { help?: true } {
  let values;
  try {
    ({ values } = parseFlags({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) return { help: true };
  const num = (flag: keyof typeof OPTIONS): number | undefined => {
    const v = values[flag];
    if (v === undefined) return undefined;
    const n = Number(v);
    if (typeof v !== "string" || v.trim() === "" || !Number.isFinite(n))
      throw new UsageError(`--${flag} needs a number, got ${JSON.stringify(v)}\n${USAGE}`);
    return n;
  };
  const o: ArmSimulatorOptions = { port: num("port") ?? 18443 };
  if (values.host !== undefined) o.host = values.host || "127.0.0.1";
  if (values.seed !== undefined) {
    if (!values.seed) throw new UsageError(`--seed needs "demo" or a file\n${USAGE}`);
    o.seed = values.seed === "demo" ? "demo" : (JSON.parse(readFileSync(values.seed, "utf8")) as SeedSpec);
  }
  if (values.tls) o.tls = true;
  const timeScale = num("time-scale");
  if (timeScale !== undefined) o.timeScale = timeScale;
  if (values.throttling) o.throttling = true;
  const operationDurationMs = num("operation-duration-ms");
  if (operationDurationMs !== undefined) o.operationDurationMs = operationDurationMs;
  const fixedMs = num("latency-ms");
  const jitterMs = num("jitter-ms");
  if (fixedMs !== undefined || jitterMs !== undefined) o.latency = { fixedMs: fixedMs ?? 0, jitterMs: jitterMs ?? 0 };
  if (values["conflict-while-operation-in-progress"]) o.conflictWhileOperationInProgress = true;
  const listPageSize = num("list-page-size");
  if (listPageSize !== undefined) o.listPageSize = listPageSize;
  const propagation = num("instance-propagation-ms");
  if (propagation !== undefined) o.instanceWritePropagatesToScaleSetAfterMs = propagation;
  const randomSeed = num("random-seed");
  if (randomSeed !== undefined) o.randomSeed = randomSeed;
  return o;
}

async function main(): Promise<void> {
  const { help, ...options } = parseArgs(process.argv.slice(2));
  if (help) {
    console.log(USAGE);
    return;
  }
  const sim = await startArmSimulator(options);
  console.log(`ARM simulator listening on ${sim.url}`);
  const stop = (): void => {
    void sim.stop().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(e instanceof UsageError ? 2 : 1);
  });
}
