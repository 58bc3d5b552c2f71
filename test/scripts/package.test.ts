import { execFile } from "node:child_process";
import { builtinModules } from "node:module";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as yauzl from "yauzl";
import {
  buildPackage,
  bundledPackageDirs,
  BUNDLE_PATH,
  ENTRY_PATH,
  LAZY_PACKAGES,
  lazyBundlePath,
  NOTICES_PATH,
  REPO_ROOT,
  SOURCE_MAP_PATH,
  type PackageSummary,
} from "../../scripts/package";

const run = promisify(execFile);
const openZip = promisify<string, yauzl.Options, yauzl.ZipFile>(yauzl.open);
const lock = JSON.parse(readFileSync(join(REPO_ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, { dev?: boolean }>;
};
/** The functions the app defines: one file per trigger under src/functions. */
const FUNCTIONS = readdirSync(join(REPO_ROOT, "src", "functions"))
  .filter((f) => f.endsWith(".ts"))
  .map((f) => f.replace(/\.ts$/, ""))
  .sort();

/** Every entry of a zip, with its bytes: the package is read back as Azure would, not from the staging folder. */
async function readZip(path: string): Promise<Map<string, Buffer>> {
  const zip = await openZip(path, { lazyEntries: true });
  const out = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on("error", reject);
    zip.on("end", () => resolve());
    zip.on("entry", (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          out.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  return out;
}

let summary: PackageSummary;
let entries: Map<string, Buffer>;
let unpacked: string;

beforeAll(async () => {
  summary = await buildPackage();
  entries = await readZip(summary.zipPath);
  // Outside the repository, so nothing resolves from the repo's own node_modules.
  unpacked = mkdtempSync(join(tmpdir(), "poolsync-package-"));
  for (const [name, bytes] of entries) {
    mkdirSync(dirname(join(unpacked, name)), { recursive: true });
    writeFileSync(join(unpacked, name), bytes);
  }
}, 300_000);

afterAll(() => {
  if (unpacked) rmSync(unpacked, { recursive: true, force: true });
});

describe("npm run package (dist/poolsync.zip)", () => {
  it("holds host.json, a package.json whose main is the entry, the bundle with its source map and its licences, nothing else", () => {
    const bundles = [BUNDLE_PATH, SOURCE_MAP_PATH, ENTRY_PATH, ...LAZY_PACKAGES.map(lazyBundlePath)];
    expect([...entries.keys()].sort()).toEqual([NOTICES_PATH, ...bundles, "host.json", "package.json"].sort());
    expect(summary.files).toBe(entries.size);
    const shipped = JSON.parse(entries.get("package.json")!.toString("utf8")) as Record<string, unknown>;
    expect(shipped.main).toBe(ENTRY_PATH);
    expect(shipped).not.toHaveProperty("dependencies");
    expect(shipped).not.toHaveProperty("devDependencies");
    expect(entries.get("host.json")!.toString("utf8")).toBe(readFileSync(join(REPO_ROOT, "host.json"), "utf8"));
  });

  it("is at most 5 MiB and 300 files", () => {
    expect(summary.bytes).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(summary.files).toBeLessThanOrEqual(300);
  });

  it("is made of the compiled app and production dependencies only: no tests, simulator, local runtime, benchmarks or dev packages", () => {
    const app = summary.inputs.filter((i) => !i.includes("node_modules/"));
    expect(app.filter((i) => !/^dist\/src\/.*\.js$/.test(i))).toEqual([]);
    expect(app).toContain("dist/src/functions/applyBackendPools.js");
    const packages = bundledPackageDirs(summary.inputs);
    expect(packages).toContain("node_modules/@azure/functions");
    expect(packages.filter((dir) => lock.packages[dir] === undefined || lock.packages[dir]!.dev === true)).toEqual([]);
    for (const dev of ["vitest", "azurite", "tsx", "typescript", "playwright-core", "yazl", "tinyglobby"])
      expect(packages).not.toContain(`node_modules/${dev}`);
  });

  it("requires nothing from outside but Node's own modules, the worker's @azure/functions-core and the ARM SDKs beside it", () => {
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const required = (path: string) =>
      [
        ...new Set(
          [
            ...entries
              .get(path)!
              .toString("utf8")
              .matchAll(/\brequire\("([^"]+)"\)/g),
          ].map((m) => m[1]!),
        ),
      ]
        .filter((m) => !builtins.has(m))
        .sort();
    // And supports-color: debug's optional colouring, required inside a try (no production dependency installs it).
    expect(required(BUNDLE_PATH)).toEqual([
      "@azure/arm-compute",
      "@azure/arm-network",
      "@azure/functions-core",
      "supports-color",
    ]);
    for (const name of LAZY_PACKAGES)
      expect(
        required(lazyBundlePath(name)).filter((m) => m !== "supports-color"),
        name,
      ).toEqual([]);
  });

  it("loads the ARM SDKs only when asked for them, from their files beside the bundle", async () => {
    const script = `
      require("./${BUNDLE_PATH}");
      const loaded = () => Object.keys(require.cache).filter((k) => k.includes("node_modules")).map((k) => k.slice(process.cwd().length + 1));
      const before = loaded();
      for (const name of ${JSON.stringify(LAZY_PACKAGES)}) require(require.resolve(name, { paths: [process.cwd() + "/dist"] }));
      console.log(JSON.stringify({ before, after: loaded().sort() }));`;
    const { stdout } = await run(process.execPath, ["-e", script], {
      cwd: unpacked,
      env: { PATH: process.env.PATH ?? "" },
    });
    const { before, after } = JSON.parse(stdout.trim().split("\n").pop()!) as { before: string[]; after: string[] };
    expect(before).toEqual([]);
    expect(after).toEqual(LAZY_PACKAGES.map(lazyBundlePath).sort());
  });

  it("loads from the unpacked zip (no node_modules at all) through package.json's main, and every function registers", async () => {
    expect(readdirSync(unpacked)).not.toContain("node_modules");
    const main = (JSON.parse(entries.get("package.json")!.toString("utf8")) as { main: string }).main;
    // The real library in test mode names each registration it skips: proof the bundle ran every entry to its end.
    const { stderr, stdout } = await run(process.execPath, ["-e", `require("./${main}")`], {
      cwd: unpacked,
      env: { PATH: process.env.PATH ?? "" },
    });
    const registered = [...`${stdout}${stderr}`.matchAll(/register function "([^"]+)"/g)].map((m) => m[1]).sort();
    expect(registered).toEqual(FUNCTIONS);
  });

  it("a stack trace of the loaded package names the TypeScript source: the map is shipped, used, and leads to src/", async () => {
    // A place in the bundle known to come from src/app/telemetryStart.ts: the text of its start-failed event.
    const bundle = entries.get(BUNDLE_PATH)!.toString("utf8");
    const at = bundle.indexOf('"telemetry.start-failed"');
    expect(at).toBeGreaterThan(0);
    const line = bundle.slice(0, at).split("\n").length - 1;
    const column = at - (bundle.lastIndexOf("\n", at) + 1);
    const main = (JSON.parse(entries.get("package.json")!.toString("utf8")) as { main: string }).main;
    const probe = `require("./${main}");
      const map = require("node:module").findSourceMap(require("node:path").resolve(${JSON.stringify(BUNDLE_PATH)}));
      const entry = map && map.findEntry(${line}, ${column});
      console.log(JSON.stringify({ found: !!map, source: entry && entry.originalSource, line: entry && entry.originalLine }));`;
    const { stdout } = await run(process.execPath, ["-e", probe], {
      cwd: unpacked,
      env: { PATH: process.env.PATH ?? "" },
    });
    const found = JSON.parse(stdout.trim().split("\n").pop()!) as { found: boolean; source: string; line: number };
    expect(found.found).toBe(true);
    expect(found.source).toMatch(/\/src\/app\/telemetryStart\.ts$/);
    const tsLine = readFileSync(join(REPO_ROOT, "src", "app", "telemetryStart.ts"), "utf8").split("\n")[found.line];
    expect(tsLine).toContain('"telemetry.start-failed"');
  });
});
