// npm run bench:tables [-- --samples N]: Table round trips of the hot path (bench/tableRoundTrips.ts), on a fresh
// Azurite of its own; the figures go to bench/tableRoundTrips.json and are printed as RESULTS.md's table.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ensureAzurite } from "../devkit/azurite";
import { measuredCommit } from "./measuredCommit";
import { runTableRoundTrips } from "./tableRoundTrips";

const PORTS = { blob: 10120, queue: 10121, table: 10122 };

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { samples: { type: "string", default: "5" } } });
  const samples = Number(values.samples);
  if (!Number.isSafeInteger(samples) || samples < 1)
    throw new Error(`--samples: a whole number ≥ 1, got ${values.samples}`);
  const azurite = await ensureAzurite(PORTS);
  try {
    const res = await runTableRoundTrips(azurite.connectionString, samples, 4141);
    const out = { generatedAt: new Date().toISOString(), commit: measuredCommit(), ...res };
    writeFileSync(path.join(__dirname, "tableRoundTrips.json"), JSON.stringify(out, null, 2) + "\n");
    const w = res.wideBurst;
    console.log(
      [
        `| measured (median of ${samples} targets) | Table round trips | target |`,
        "|---|---|---|",
        `| warm leading declaration (declare message, its pass, its own write's events) | ${res.warmLeading} | ≤ 6 |`,
        `| … on a host that wrote nothing for 10 s (it first reserves its subscription's write tokens) | ${res.warmLeadingQuietHost} | ≤ 6 |`,
        `| a burst of 4 on one warm target | ${res.burstOfFour} | ≤ 10 |`,
        `| another writer's ARM event on a cached target: the event's own work | ${res.foreignEvent} | ≤ 2 |`,
        `| … and the drift check it wakes (a pass of the target: read, lease, commit) | ${res.foreignEventPass} | (a pass) |`,
        `| wide burst (${w.scaleSets} scale sets × ${w.perScaleSet} pools): largest partition's share of ${w.writes} writes over ${w.partitions} partitions | ${(100 * w.largestShare).toFixed(1)} % (${w.largestIs}) | reported |`,
      ].join("\n"),
    );
  } finally {
    await azurite.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
