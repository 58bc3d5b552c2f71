// `npm run sim -- --port 18443 --seed demo` : serves the simulator until SIGINT/SIGTERM.
import { readFileSync } from "node:fs";
import { startArmSimulator, type ArmSimulatorOptions, type SeedSpec } from "./index";

const USAGE = `usage: npm run sim -- [--port 18443] [--host 127.0.0.1] [--seed demo|file.json] [--tls]
  [--time-scale N] [--throttling] [--operation-duration-ms N] [--latency-ms N] [--jitter-ms N]
  [--conflict-while-operation-in-progress] [--list-page-size N] [--instance-propagation-ms N] [--random-seed N]`;

export function parseArgs(argv: string[]): ArmSimulatorOptions {
  const o: ArmSimulatorOptions = { port: 18443 };
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n)) throw new Error(`${flag} needs a number\n${USAGE}`);
    return n;
  };
  let latency = { fixedMs: 0, jitterMs: 0 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const next = (): string | undefined => argv[++i];
    switch (flag) {
      case "--port": o.port = num(flag, next()); break;
      case "--host": o.host = next() ?? "127.0.0.1"; break;
      case "--seed": {
        const v = next();
        if (!v) throw new Error(`--seed needs "demo" or a file\n${USAGE}`);
        o.seed = v === "demo" ? "demo" : (JSON.parse(readFileSync(v, "utf8")) as SeedSpec);
        break;
      }
      case "--tls": o.tls = true; break;
      case "--time-scale": o.timeScale = num(flag, next()); break;
      case "--throttling": o.throttling = true; break;
      case "--operation-duration-ms": o.operationDurationMs = num(flag, next()); break;
      case "--latency-ms": latency = { ...latency, fixedMs: num(flag, next()) }; o.latency = latency; break;
      case "--jitter-ms": latency = { ...latency, jitterMs: num(flag, next()) }; o.latency = latency; break;
      case "--conflict-while-operation-in-progress": o.conflictWhileOperationInProgress = true; break;
      case "--list-page-size": o.listPageSize = num(flag, next()); break;
      case "--instance-propagation-ms": o.instanceWritePropagatesToScaleSetAfterMs = num(flag, next()); break;
      case "--random-seed": o.randomSeed = num(flag, next()); break;
      case "--help": case "-h": console.log(USAGE); process.exit(0); break;
      default: throw new Error(`unknown argument ${String(flag)}\n${USAGE}`);
    }
  }
  return o;
}

async function main(): Promise<void> {
  const sim = await startArmSimulator(parseArgs(process.argv.slice(2)));
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
    process.exit(1);
  });
}
