// The cold-start workload (`npm run bench -- --only=coldstart`): the deployment zip of a baseline commit (default:
// main) and of this tree, each unpacked, each function's first invocation handled by a fresh process
// (bench/coldstartProbe.ts) as on a fresh Flex Consumption instance. Medians over runs, both packages in one run.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as yauzl from "yauzl";
import { buildPackage, REPO_ROOT } from "../scripts/package";
import { DEMO_SEED, DEMO_SUBSCRIPTION, startArmSimulator } from "../sim";
import { percentile } from "./stats";
import { writeMarkedSection } from "./markedSection";
import type { ProbeInputs, ProbeResult } from "./coldstartProbe";

/**
 * Every function the app registers (all seven: four HTTP, Event Grid, queue, timer), each one's first invocation in a
 * process of its own. bench/coldstart.test.ts keeps the list equal to src/functions.
 */
export const COLDSTART_FUNCTIONS = [
  "status",
  "memberships",
  "plan",
  "history",
  "onResourceEvent",
  "applyBackendPools",
  "reconcileStale",
] as const;

export interface PackageFigures {
  label: string;
  zipBytes: number;
  files: number;
}

export interface ColdStartResult {
  generatedAt: string;
  node: string;
  runs: number;
  packages: PackageFigures[];
  /** Per package label, per function: the median of each figure over the runs, and every run. */
  figures: Record<
    string,
    Record<string, { median: Omit<ProbeResult, "function" | "ok" | "error">; runs: ProbeResult[] }>
  >;
}

const openZip = promisify<string, yauzl.Options, yauzl.ZipFile>(yauzl.open);

async function unzipTo(zipPath: string, dir: string): Promise<number> {
  const zip = await openZip(zipPath, { lazyEntries: true });
  let count = 0;
  await new Promise<void>((resolve, reject) => {
    zip.on("error", reject);
    zip.on("end", () => resolve());
    zip.on("entry", (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          const target = path.join(dir, entry.fileName);
          mkdirSync(path.dirname(target), { recursive: true });
          writeFileSync(target, Buffer.concat(chunks));
          count++;
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  return count;
}

/**
 * The baseline's own zip, built by its own scripts/package.ts from a detached worktree of `ref` (its sources, its
 * lock file, its layout), compiled with this tree's tsc. Kept under dist/coldstart by commit, so reruns reuse it.
 */
function baselineZip(ref: string, log: (line: string) => void): { zip: string; label: string } {
  const sha = execFileSync("git", ["rev-parse", "--short", ref], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
  const label = `${ref} @ ${sha}`;
  const kept = path.join(REPO_ROOT, "dist", "coldstart", `baseline-${sha}.zip`);
  if (existsSync(kept)) return { zip: kept, label };
  const tree = mkdtempSync(path.join(tmpdir(), "poolsync-baseline-"));
  log(`coldstart: building the baseline package of ${label} in ${tree}`);
  execFileSync("git", ["worktree", "add", "--detach", tree, sha], { cwd: REPO_ROOT, stdio: "ignore" });
  try {
    // Compiling needs only the compiler and types: this tree's node_modules serve (a type error from a newer SDK's
    // types does not stop tsc emitting). The package itself installs the baseline's own lock file.
    symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(tree, "node_modules"));
    try {
      execFileSync(path.join(REPO_ROOT, "node_modules", ".bin", "tsc"), ["-p", "src/tsconfig.json"], {
        cwd: tree,
        stdio: "ignore",
      });
    } catch {
      if (!existsSync(path.join(tree, "dist", "src", "functions")))
        throw new Error(`the baseline ${label} did not compile`);
    }
    execFileSync(path.join(REPO_ROOT, "node_modules", ".bin", "tsx"), ["scripts/package.ts"], {
      cwd: tree,
      stdio: ["ignore", "ignore", "inherit"],
    });
    mkdirSync(path.dirname(kept), { recursive: true });
    writeFileSync(kept, readFileSync(path.join(tree, "dist", "poolsync.zip")));
  } finally {
    execFileSync("git", ["worktree", "remove", "--force", tree], { cwd: REPO_ROOT, stdio: "ignore" });
  }
  return { zip: kept, label };
}

function runProbe(appDir: string, fn: string, env: Record<string, string>, inputs: ProbeInputs): Promise<ProbeResult> {
  const probeJs = path.join(REPO_ROOT, "dist", "bench", "coldstartProbe.js");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [probeJs, appDir, fn, JSON.stringify(inputs)], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("COLDSTART "));
      if (code !== 0 || !line)
        return reject(new Error(`probe of ${fn} in ${appDir} exited ${code}: ${err.slice(-2000)}`));
      resolve(JSON.parse(line.slice("COLDSTART ".length)) as ProbeResult);
    });
  });
}

const FIGURES = [
  "registeredSinceStartMs",
  "registerMs",
  "firstInvocationMs",
  "handledSinceStartMs",
  "functions",
  "modulesLoaded",
] as const;

export async function runColdStart(
  storage: string,
  runs: number,
  baselineRef: string,
  log: (line: string) => void,
): Promise<ColdStartResult> {
  execFileSync("npm", ["run", "build"], { cwd: REPO_ROOT, stdio: "ignore" });
  const work = mkdtempSync(path.join(tmpdir(), "poolsync-coldstart-"));
  const sim = await startArmSimulator({ seed: DEMO_SEED, tls: true, operationDurationMs: 0 });
  try {
    const base = baselineZip(baselineRef, log);
    const current = await buildPackage();
    const packages: (PackageFigures & { appDir: string })[] = [];
    for (const [label, zip] of [
      [base.label, base.zip],
      ["this tree", current.zipPath],
    ] as const) {
      // The baseline's 19,000 files are unpacked once, beside its zip (outside any node_modules tree of the repo's
      // own: dist/coldstart has none above it but the repo's, which the unpacked package's own node_modules shadows).
      const appDir = zip === base.zip ? zip.replace(/\.zip$/, "") : path.join(work, "app");
      const unpackedBefore = zip === base.zip && existsSync(path.join(appDir, "package.json"));
      const files = unpackedBefore
        ? Number(readFileSync(path.join(appDir, ".files"), "utf8"))
        : await unzipTo(zip, appDir);
      if (zip === base.zip && !unpackedBefore) writeFileSync(path.join(appDir, ".files"), String(files));
      packages.push({ label, appDir, zipBytes: readFileSync(zip).length, files });
      log(`coldstart: ${label}: ${(readFileSync(zip).length / 1024 / 1024).toFixed(1)} MiB, ${files} files`);
    }
    const caFile = path.join(work, "sim-ca.pem");
    writeFileSync(caFile, sim.ca ?? "");
    const rg = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag`;
    const scaleSetId = `${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`;
    const inputs: ProbeInputs = {
      scaleSetId,
      queueMessage: JSON.stringify({
        v: 1,
        kind: "declare",
        scaleSetId,
        backendPoolId: `${rg}/providers/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s`,
        state: "present",
      }),
      event: {
        subject: scaleSetId,
        eventType: "Microsoft.Resources.ResourceWriteSuccess",
        eventTime: new Date().toISOString(),
        id: "4eef929a-a65c-47dd-93e2-46b8c17c6c17",
        data: {
          resourceProvider: "Microsoft.Compute",
          resourceUri: scaleSetId,
          operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
          status: "Succeeded",
          subscriptionId: DEMO_SUBSCRIPTION,
        },
        dataVersion: "2",
        metadataVersion: "1",
        topic: `/subscriptions/${DEMO_SUBSCRIPTION}`,
      },
    };
    const figures: ColdStartResult["figures"] = {};
    for (let r = 0; r < runs; r++) {
      // Alternate which package goes first, so neither always meets a warmer page cache.
      const order = r % 2 === 0 ? packages : [...packages].reverse();
      for (const pkg of order) {
        for (const fn of COLDSTART_FUNCTIONS) {
          // Fresh tables and queue per process: every first invocation finds a store as cold as the instance.
          const suffix = `cs${r}${packages.indexOf(pkg)}${fn.slice(0, 4).toLowerCase()}${Math.random().toString(36).slice(2, 8)}`;
          const env = {
            PATH: process.env.PATH ?? "",
            AzureWebJobsStorage: storage,
            POOLSYNC_SCOPES: `/subscriptions/${DEMO_SUBSCRIPTION}`,
            POOLSYNC_BINDINGS: "*",
            ARM_ENDPOINT: sim.url,
            POOLSYNC_ARM_CREDENTIAL: "static",
            POOLSYNC_ARM_STATIC_TOKEN: "sim-token",
            POOLSYNC_ARM_CA_FILE: caFile,
            POOLSYNC_AUTH: "key",
            POOLSYNC_QUEUE: `q${suffix}`,
            POOLSYNC_MEMBERSHIPS_TABLE: `m${suffix}`,
            POOLSYNC_CACHE_TABLE: `c${suffix}`,
            POOLSYNC_DECLARE_WINDOW_SECONDS: "0",
            POOLSYNC_GATHER_MILLISECONDS: "0",
            POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
          };
          const res = await runProbe(pkg.appDir, fn, env, inputs);
          if (!res.ok) throw new Error(`${pkg.label}: the first ${fn} invocation failed: ${res.error}`);
          const slot = ((figures[pkg.label] ??= {})[fn] ??= { median: {} as never, runs: [] });
          slot.runs.push(res);
          log(
            `coldstart run ${r + 1} ${pkg.label} ${fn}: registered ${res.registerMs.toFixed(0)} ms (${res.registeredSinceStartMs.toFixed(0)} since start), first invocation ${res.firstInvocationMs.toFixed(0)} ms`,
          );
        }
      }
    }
    for (const perFn of Object.values(figures))
      for (const slot of Object.values(perFn))
        slot.median = Object.fromEntries(
          FIGURES.map((f) => [
            f,
            percentile(
              slot.runs.map((x) => x[f]),
              50,
            ),
          ]),
        ) as never;
    return {
      generatedAt: new Date().toISOString(),
      node: process.version,
      runs,
      packages: packages.map(({ label, zipBytes, files }) => ({ label, zipBytes, files })),
      figures,
    };
  } finally {
    await sim.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

const MARK_START = "<!-- coldstart:start -->";
const MARK_END = "<!-- coldstart:end -->";

export function renderColdStart(r: ColdStartResult): string {
  const [base, current] = r.packages;
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const ms = (v: number) => v.toFixed(0);
  const lines = [
    MARK_START,
    "## Cold start (issues 28 and 44)",
    "",
    `\`npm run bench -- --only=coldstart --baseline <ref>\`, ${r.generatedAt}, Node ${r.node}, medians of ${r.runs} runs; each`,
    "figure is a fresh process loading the unpacked deployment zip as the Functions Node.js worker does (the",
    "`@azure/functions-core` stand-in, then every file of package.json's `main`: all seven functions register), then",
    "handling one function's first invocation on Azurite: a GET of each of the four HTTP functions, an ARM write",
    "event, a declare message reconciled against the ARM simulator, a timer tick. Every function of the app, each in",
    "processes of its own; both packages side by side in one run, alternating which goes first.",
    "",
    "| package | zip | files |",
    "| --- | ---: | ---: |",
    ...r.packages.map((p) => `| ${p.label} | ${mib(p.zipBytes)} | ${p.files} |`),
    "",
    "| function | package | all registered (ms, entry files) | since process start (ms) | app modules loaded | first invocation handled (ms after registration) | since process start (ms) |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const fn of COLDSTART_FUNCTIONS) {
    for (const p of r.packages) {
      const m = r.figures[p.label]?.[fn]?.median;
      if (!m) continue;
      lines.push(
        `| ${fn} | ${p.label} | ${ms(m.registerMs)} | ${ms(m.registeredSinceStartMs)} | ${m.modulesLoaded} | ${ms(m.firstInvocationMs)} | ${ms(m.handledSinceStartMs)} |`,
      );
    }
  }
  if (base && current) {
    // Every probe registers every function, whichever it then invokes: all its runs are samples of the same figure.
    const reg = (label: string) =>
      percentile(
        COLDSTART_FUNCTIONS.flatMap((fn) => r.figures[label]?.[fn]?.runs.map((x) => x.registerMs) ?? []),
        50,
      );
    const ratio = reg(current.label) / reg(base.label);
    lines.push(
      "",
      `Registration of all ${COLDSTART_FUNCTIONS.length} functions, median of all ${r.runs * COLDSTART_FUNCTIONS.length} processes of each package: ${ms(reg(current.label))} ms against ${ms(reg(base.label))} ms, ${(ratio * 100).toFixed(0)} % of ${base.label} ` +
        `(issue 28's target, at most 33 % of the unbundled package of 2558e6a, was met at 31 %); zip ${mib(current.zipBytes)} and ${current.files} files (targets 5 MiB, 300 files).`,
    );
  }
  lines.push(MARK_END, "");
  return lines.join("\n");
}

/** Writes the section into RESULTS.md in place (or at its end), leaving every other section as it was. */
export function writeColdStartSection(resultsMd: string, r: ColdStartResult): void {
  writeMarkedSection(resultsMd, { start: MARK_START, end: MARK_END }, renderColdStart(r));
}

/** The section as last measured (bench/coldstart.json), for a full run that rewrites RESULTS.md from results.json. */
export function lastColdStartSection(dir: string): string {
  const file = path.join(dir, "coldstart.json");
  return existsSync(file) ? `\n${renderColdStart(JSON.parse(readFileSync(file, "utf8")) as ColdStartResult)}` : "";
}
