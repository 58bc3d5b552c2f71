import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as yauzl from "yauzl";
import { buildPackage, REPO_ROOT, type PackageSummary } from "../../scripts/package";

const run = promisify(execFile);
const openZip = promisify<string, yauzl.Options, yauzl.ZipFile>(yauzl.open);
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
  main: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

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
  it("holds host.json, package.json, the compiled app and node_modules, nothing else", () => {
    const names = [...entries.keys()];
    expect(names).toContain("host.json");
    expect(names).toContain("package.json");
    const outside = names.filter((n) => n !== "host.json" && n !== "package.json" && !n.startsWith("dist/src/") && !n.startsWith("node_modules/"));
    expect(outside).toEqual([]);
    expect(summary.files).toBe(entries.size);
  });

  it("its app part is compiled JavaScript only: no TypeScript, no tests, simulator, local runtime or benchmarks", () => {
    const app = [...entries.keys()].filter((n) => n.startsWith("dist/"));
    expect(app.filter((n) => !/\.js(\.map)?$/.test(n))).toEqual([]);
    expect(app.filter((n) => /^dist\/src\/(local|sim|test|bench)\//.test(n))).toEqual([]);
    const sources = app.filter((n) => n.endsWith(".js")).map((n) => entries.get(n)!.toString("utf8"));
    for (const source of sources) expect(source).not.toMatch(/require\("(\.\.\/)+(sim|local|test|bench)\//);
    expect(app).toContain("dist/src/functions/applyBackendPools.js");
  });

  it("holds every production dependency and no dev dependency", () => {
    for (const dep of Object.keys(pkg.dependencies)) expect(entries.has(`node_modules/${dep}/package.json`), dep).toBe(true);
    const devOnly = Object.keys(pkg.devDependencies).filter((d) => !(d in pkg.dependencies));
    expect(devOnly).toEqual(expect.arrayContaining(["vitest", "azurite", "tsx", "typescript", "playwright-core"]));
    for (const dep of devOnly) expect(entries.has(`node_modules/${dep}/package.json`), dep).toBe(false);
  });

  it("loads every function module from the unpacked zip, and each registers its trigger", async () => {
    const functionFiles = [...entries.keys()].filter((n) => /^dist\/src\/functions\/[^/]+\.js$/.test(n));
    expect(functionFiles.length).toBeGreaterThanOrEqual(5);
    // The real library in test mode names each registration it skips: proof the module ran to its last statement.
    const script = `for (const f of ${JSON.stringify(functionFiles)}) require("./" + f);`;
    const { stderr, stdout } = await run(process.execPath, ["-e", script], { cwd: unpacked, env: { PATH: process.env.PATH ?? "" } });
    const registered = [...`${stdout}${stderr}`.matchAll(/register function "([^"]+)"/g)].map((m) => m[1]).sort();
    expect(registered).toEqual(functionFiles.map((f) => f.replace(/^.*\/(.*)\.js$/, "$1")).sort());
  });

  it("a missing production dependency fails the load (the check above can fail)", async () => {
    const zodDir = join(unpacked, "node_modules", "zod");
    const moved = `${zodDir}.away`;
    await run("mv", [zodDir, moved]);
    try {
      const script = `require("./dist/src/functions/applyBackendPools.js")`;
      await expect(run(process.execPath, ["-e", script], { cwd: unpacked, env: { PATH: process.env.PATH ?? "" } })).rejects.toThrow(/Cannot find module 'zod'/);
    } finally {
      await run("mv", [moved, zodDir]);
    }
  });
});
