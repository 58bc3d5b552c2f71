// What starting Azure Monitor telemetry costs a fresh process, two ways: poolsync's own start (src/app/telemetry.ts:
// the exporter and the OpenTelemetry SDK, every signal) and the distro's useAzureMonitor (@azure/monitor-opentelemetry),
// beside a process that starts none. Each figure is a fresh `node` process, the modes alternating, medians over runs.
//
//   npm run build
//   (cd "$(mktemp -d)" && npm init -y >/dev/null && npm install --ignore-scripts @azure/monitor-opentelemetry@1.21.0)
//   unshare -n npx tsx bench/telemetryStartCost.ts --distro <that folder>/node_modules --runs 10
//
// `unshare -n` (as root) runs it without a network: the connection string names 127.0.0.1, and nothing is exported
// before the process exits, but the distro's resource detectors would ask the Azure metadata endpoint.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { percentile } from "./stats";

const CONNECTION = "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://127.0.0.1:9/";
const TELEMETRY_JS = join(__dirname, "..", "dist", "src", "app", "telemetry.js");

function script(mode: string, distroModules: string): string {
  const start =
    mode === "exporter"
      ? `require(${JSON.stringify(TELEMETRY_JS)}).startTelemetry({ APPLICATIONINSIGHTS_CONNECTION_STRING: cs }, undefined, () => {});`
      : mode === "distro"
        ? `require(${JSON.stringify(join(distroModules, "@azure", "monitor-opentelemetry"))}).useAzureMonitor({ azureMonitorExporterOptions: { connectionString: cs } });`
        : "";
  return `const cs = ${JSON.stringify(CONNECTION)}; const t0 = performance.now(); ${start}
const t1 = performance.now();
console.log(JSON.stringify({ startMs: t1 - t0, sinceProcessStartMs: t1, rssMB: process.memoryUsage().rss / 1048576 }));
process.exit(0);`;
}

function main(): void {
  const args = process.argv.slice(2);
  const distro = args[args.indexOf("--distro") + 1];
  const runs = Number(args.includes("--runs") ? args[args.indexOf("--runs") + 1] : 10);
  if (!args.includes("--distro") || !distro || !Number.isInteger(runs) || runs < 1) {
    console.error(
      "usage: tsx bench/telemetryStartCost.ts --distro <node_modules with @azure/monitor-opentelemetry> [--runs N]",
    );
    process.exit(2);
  }
  const modes = ["none", "exporter", "distro"] as const;
  const rows: Record<string, { startMs: number; sinceProcessStartMs: number; rssMB: number }[]> = {};
  for (let r = 0; r < runs; r++)
    for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
      const out = execFileSync(process.execPath, ["-e", script(mode, distro)], {
        env: { PATH: process.env.PATH ?? "", APPLICATIONINSIGHTS_STATSBEAT_DISABLED: "true" },
        encoding: "utf8",
      });
      (rows[mode] ??= []).push(JSON.parse(out.trim().split("\n").pop() as string) as never);
    }
  console.log(`Node ${process.version}, medians of ${runs} fresh processes each`);
  console.log("| start | telemetry start (ms) | since process start (ms) | resident memory (MB) |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const mode of modes) {
    const m = (f: "startMs" | "sinceProcessStartMs" | "rssMB") =>
      percentile(
        rows[mode]!.map((x) => x[f]),
        50,
      );
    console.log(
      `| ${mode} | ${m("startMs").toFixed(0)} | ${m("sinceProcessStartMs").toFixed(0)} | ${m("rssMB").toFixed(1)} |`,
    );
  }
}

main();
