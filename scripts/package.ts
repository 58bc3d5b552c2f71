// Builds dist/poolsync.zip, the Flex Consumption deployment package: host.json, a package.json whose `main` names the
// entry (dist/index.js: source maps on, then the bundle), the bundle (dist/main.js) and its source map, the ARM SDKs'
// bundles beside it (see LAZY_PACKAGES) and the licences of what the bundles hold, nothing else. Run it as `npm run package` (which builds first).
//
// Why a bundle (esbuild, one entry) rather than the compiled files plus a traced node_modules (@vercel/nft): the cold
// start is spent resolving and reading about a thousand module files (the Azure SDKs are many small ones); a trace
// would still ship and load each of them, one file each, and every package.json beside them. One bundle is one file
// to read and compile (registration in about a third of the baseline's time: bench/RESULTS.md, "Cold start").
// `@azure/functions-core` stays external: the worker provides it at run time.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import {
  copyFileSync,
  createWriteStream,
  mkdtempSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { once } from "node:events";
import { ZipFile } from "yazl";

export const REPO_ROOT = join(__dirname, "..");

export interface PackageSummary {
  zipPath: string;
  files: number;
  bytes: number;
  /** Every source file the bundle was made of, relative to the repository (esbuild's metafile). */
  inputs: string[];
}

/** The licence texts of the packages bundled, beside the bundle (their notices must travel with their code). */
export const NOTICES_PATH = "dist/THIRD_PARTY_LICENSES.txt";

/** Where the bundle sits in the package. */
export const BUNDLE_PATH = "dist/main.js";

/** The bundle's source map, beside it: a production stack trace names src/*.ts and its line, not main.js:1:2879000. */
export const SOURCE_MAP_PATH = `${BUNDLE_PATH}.map`;

/**
 * What the package's package.json `main` names: turns Node's source-map support on, then loads the bundle. Node reads
 * a script's source map only if the support was on when the script loaded, so it cannot be the bundle's own first
 * line.
 */
export const ENTRY_PATH = "dist/index.js";
const ENTRY = `"use strict";\n// Stack traces through ${SOURCE_MAP_PATH}: src/*.ts and its lines.\nprocess.setSourceMapsEnabled(true);\nmodule.exports = require("./main.js");\n`;

/**
 * The ARM SDKs, bundled each on its own beside the main bundle, where `require("@azure/arm-compute")` finds it
 * (dist/node_modules/@azure/arm-compute.js): they are 3.5 of the 5.7 MB of one bundle, and a bundle is read and
 * parsed whole when it loads, lazy as its modules' evaluation is. So they are read only by the instance that first
 * calls ARM. They carry their own copy of the core libraries they use; what crosses between the copies (pipeline
 * policies, requests, RestError by name) is duck-typed.
 */
export const LAZY_PACKAGES = ["@azure/arm-compute", "@azure/arm-network"] as const;
export const lazyBundlePath = (name: string) => `dist/node_modules/${name}.js`;

function copyInto(dir: string, from: string, to: string): void {
  mkdirSync(dirname(join(dir, to)), { recursive: true });
  copyFileSync(from, join(dir, to));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(full);
    return e.isFile() ? [full] : [];
  });
}

/** The compiled function entry files, in the order the repository's own `main` glob lists them. */
function functionEntries(appDir: string): string[] {
  return readdirSync(join(appDir, "functions"))
    .filter((f) => f.endsWith(".js"))
    .sort()
    .map((f) => join(appDir, "functions", f));
}

/** The package directories (node_modules/..., nested ones too) the bundle's inputs come from. */
export function bundledPackageDirs(inputs: readonly string[]): string[] {
  const dirs = inputs
    .map((i) => /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(i)?.[1])
    .filter((d): d is string => d !== undefined);
  return [...new Set(dirs)].sort();
}

function notices(root: string, inputs: readonly string[]): string {
  return bundledPackageDirs(inputs)
    .map((dir) => {
      const { name, version, license } = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as Record<
        string,
        string
      >;
      const file = readdirSync(join(root, dir)).find((f) => /^(licen[cs]e|copying)/i.test(f));
      const text = file
        ? readFileSync(join(root, dir, file), "utf8").trim()
        : `(no licence file; package.json says ${license})`;
      return `${name}@${version} (${license})\n\n${text}\n`;
    })
    .join(`\n${"-".repeat(80)}\n\n`);
}

/**
 * The package's package.json: the repository's, with `main` naming the entry (then the bundle) and no dependencies (they are inside
 * it; nothing must install anything on the instance).
 */
function packageJson(root: string): string {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, unknown>;
  const keep = ["name", "version", "private", "description", "license", "type", "engines"];
  const out: Record<string, unknown> = Object.fromEntries(keep.filter((k) => k in pkg).map((k) => [k, pkg[k]]));
  out.main = ENTRY_PATH;
  return JSON.stringify(out, null, 2) + "\n";
}

/**
 * The production dependencies as the lock file pins them (`npm ci --omit=dev`), installed once per lock file into a
 * folder outside the repository and reused: the install is most of a package build's time (about 8 s, and 24 s on a
 * busy machine inside the test loop), and what it installs depends on nothing but the lock file. Installed into a
 * fresh folder and renamed into place, so a build never sees a half-done install, and two builds at once at worst
 * both install.
 */
function productionModules(root: string): string {
  const lock = readFileSync(join(root, "package-lock.json"));
  const key = createHash("sha256")
    .update(lock)
    .update(readFileSync(join(root, "package.json")))
    .digest("hex");
  const dir = join(tmpdir(), `poolsync-production-modules-${key.slice(0, 16)}`);
  const modules = join(dir, "node_modules");
  const installed = () => statSync(modules, { throwIfNoEntry: false })?.isDirectory() === true;
  if (installed()) return modules;
  const installing = mkdtempSync(`${dir}.installing-`);
  try {
    for (const file of ["package.json", "package-lock.json"]) copyInto(installing, join(root, file), file);
    execFileSync("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: installing,
      stdio: ["ignore", "ignore", "inherit"],
    });
    try {
      renameSync(installing, dir);
    } catch (err) {
      // Another build installed the same lock file first: use its folder.
      if (!installed()) throw err;
    }
  } finally {
    rmSync(installing, { recursive: true, force: true });
  }
  return modules;
}

/**
 * The bundle's map with each source named as it is in the repository, relative to the map (`../src/app/x.ts`): on
 * the instance a frame reads `<wwwroot>/src/app/x.ts:12:7`, not the temporary build folder's path.
 */
function sourceMapFromRepository(mapFile: string, buildDir: string): string {
  const map = JSON.parse(readFileSync(mapFile, "utf8")) as { sources: string[] };
  const mapDir = dirname(mapFile);
  map.sources = map.sources.map((source) => {
    const fromBuild = relative(buildDir, resolve(mapDir, source)).split(sep).join("/");
    // Compiled app files' maps point from dist/src/x.js back to src/x.ts; packages keep their own names.
    return fromBuild.startsWith("..") ? source : `../${fromBuild}`;
  });
  return JSON.stringify(map);
}

/**
 * Stages and zips the package. `dist/src` must be built (`tsc -b`): the bundle is made from the compiled function
 * entry files (the same JavaScript `func start` runs), each required in turn by one entry, with the production
 * dependencies as the lock file installed them.
 */
export async function buildPackage(root: string = REPO_ROOT): Promise<PackageSummary> {
  const appDir = join(root, "dist", "src");
  const entries = (() => {
    try {
      return functionEntries(appDir);
    } catch {
      return [];
    }
  })();
  if (entries.length === 0) throw new Error(`${appDir}/functions is missing: run \`npm run build\` first`);
  // The bundle is made where only the production dependencies are installed (`npm ci --omit=dev` from the lock
  // file): a module reachable only through a dev dependency (debug's optional supports-color, say) cannot slip in.
  // Outside the repository: module resolution walks up the parent folders, and must not find the repo's node_modules.
  const staging = join(root, "dist", "package");
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const buildDir = mkdtempSync(join(tmpdir(), "poolsync-package-build-"));
  let inputs: string[];
  try {
    for (const file of ["package.json", "package-lock.json"]) copyInto(buildDir, join(root, file), file);
    // The compiled files' own source maps come along: esbuild chains them, so the bundle's map leads to src/*.ts.
    for (const file of filesUnder(appDir).filter((f) => f.endsWith(".js") || f.endsWith(".js.map")))
      copyInto(buildDir, file, relative(root, file));
    symlinkSync(productionModules(root), join(buildDir, "node_modules"), "dir");
    writeFileSync(join(staging, "host.json"), readFileSync(join(root, "host.json")));
    writeFileSync(join(staging, "package.json"), packageJson(root));
    const common = {
      absWorkingDir: buildDir,
      // node_modules is a link to the shared install: paths stay under the build folder, as the inputs report them.
      preserveSymlinks: true,
      bundle: true,
      platform: "node",
      target: "node22",
      format: "cjs",
      minify: true,
      // Error classes and functions keep their names: logs, problem records and `instanceof`-free checks read them.
      keepNames: true,
      legalComments: "none",
      metafile: true,
      logLevel: "error",
    } as const;
    const result = await build({
      ...common,
      stdin: {
        contents: entries
          .map((f) => `require(${JSON.stringify("./" + relative(root, f).split(sep).join("/"))});`)
          .join("\n"),
        resolveDir: buildDir,
        sourcefile: "<functions>",
        loader: "js",
      },
      outfile: join(staging, BUNDLE_PATH),
      external: ["@azure/functions-core", ...LAZY_PACKAGES],
      // Positions only (no source texts): the map stays smaller, and the instance never needs the sources themselves.
      sourcemap: "linked",
      sourcesContent: false,
    });
    writeFileSync(join(staging, SOURCE_MAP_PATH), sourceMapFromRepository(join(staging, SOURCE_MAP_PATH), buildDir));
    writeFileSync(join(staging, ENTRY_PATH), ENTRY);
    const lazy = await Promise.all(
      LAZY_PACKAGES.map((name) =>
        build({
          ...common,
          stdin: {
            contents: `module.exports = require(${JSON.stringify(name)});`,
            resolveDir: buildDir,
            sourcefile: `<${name}>`,
            loader: "js",
          },
          outfile: join(staging, lazyBundlePath(name)),
        }),
      ),
    );
    const metafileInputs = [result, ...lazy].flatMap((r) => Object.keys(r.metafile.inputs));
    inputs = [...new Set(metafileInputs)].filter((i) => !i.startsWith("<"));
    writeFileSync(join(staging, NOTICES_PATH), notices(buildDir, inputs));
  } finally {
    rmSync(buildDir, { recursive: true, force: true });
  }

  const zipPath = join(root, "dist", "poolsync.zip");
  const zip = new ZipFile();
  const files = filesUnder(staging).sort();
  for (const file of files) zip.addFile(file, relative(staging, file).split(sep).join("/"));
  zip.end();
  const out = createWriteStream(zipPath);
  zip.outputStream.pipe(out);
  await once(out, "close");
  return { zipPath, files: files.length, bytes: statSync(zipPath).size, inputs };
}

if (require.main === module) {
  buildPackage().then(
    (s) =>
      console.log(`${relative(process.cwd(), s.zipPath)}: ${s.files} files, ${(s.bytes / 1024 / 1024).toFixed(1)} MiB`),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
