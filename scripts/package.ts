// Builds dist/poolsync.zip, the Flex Consumption deployment package: host.json, package.json, the compiled app
// (dist/src) and the production node_modules, nothing else. Run it as `npm run package` (which builds first).
import { execFileSync } from "node:child_process";
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { once } from "node:events";
import { ZipFile } from "yazl";

export const REPO_ROOT = join(__dirname, "..");

export interface PackageSummary {
  zipPath: string;
  files: number;
  bytes: number;
}

/** Compiled files of the app that belong in the package: its JavaScript and source maps, no declarations or build info. */
function isAppOutput(path: string): boolean {
  return path.endsWith(".js") || path.endsWith(".js.map");
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(full);
    return e.isFile() ? [full] : [];
  });
}

function copyInto(staging: string, from: string, to: string): void {
  mkdirSync(dirname(join(staging, to)), { recursive: true });
  copyFileSync(from, join(staging, to));
}

/**
 * Stages and zips the package. `dist/src` must be built (`tsc -b`). The production dependencies are installed with
 * `npm ci --omit=dev` from the lock file, so the package holds exactly what the lock file pins.
 */
export async function buildPackage(root: string = REPO_ROOT): Promise<PackageSummary> {
  const appDir = join(root, "dist", "src");
  if (!existsSync(join(appDir, "functions"))) throw new Error(`${appDir}/functions is missing: run \`npm run build\` first`);
  const staging = join(root, "dist", "package");
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });

  for (const file of ["host.json", "package.json", "package-lock.json"]) copyInto(staging, join(root, file), file);
  for (const file of filesUnder(appDir).filter(isAppOutput)) copyInto(staging, file, relative(root, file));
  execFileSync("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], {
    cwd: staging,
    stdio: ["ignore", "ignore", "inherit"],
  });
  // The lock file was only needed by npm ci; the host reads package.json alone.
  rmSync(join(staging, "package-lock.json"));
  rmSync(join(staging, "node_modules", ".package-lock.json"), { force: true });

  const zipPath = join(root, "dist", "poolsync.zip");
  const zip = new ZipFile();
  const entries = filesUnder(staging).sort();
  for (const file of entries) zip.addFile(file, relative(staging, file).split(sep).join("/"));
  zip.end();
  const out = createWriteStream(zipPath);
  zip.outputStream.pipe(out);
  await once(out, "close");
  return { zipPath, files: entries.length, bytes: statSync(zipPath).size };
}

if (require.main === module) {
  buildPackage().then(
    (s) => console.log(`${relative(process.cwd(), s.zipPath)}: ${s.files} files, ${(s.bytes / 1024 / 1024).toFixed(1)} MiB`),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
