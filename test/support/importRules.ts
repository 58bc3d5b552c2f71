import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** Which top-level folders each part of the repository may import from (relative imports only; packages are free). */
export const ALLOWED_IMPORTS: Record<string, readonly string[]> = {
  src: ["src"],
  sim: ["sim"],
  devkit: ["devkit", "sim"],
  local: ["local", "src", "sim", "devkit"],
  // The Functions host emulation knows no poolsync: not the app, not the simulator, not the stack or the demo.
  [join("local", "host")]: [join("local", "host"), "devkit"],
};

export interface ImportViolation {
  file: string;
  specifier: string;
  reaches: string;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']*)["']/gm;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : tsFiles(full);
    return e.isFile() && e.name.endsWith(".ts") ? [full] : [];
  });
}

/** Every relative import under `root/<part>` that reaches a folder the part may not import from. */
export function importViolations(root: string, part: string, allowed: readonly string[] = ALLOWED_IMPORTS[part] ?? [part]): ImportViolation[] {
  const out: ImportViolation[] = [];
  for (const file of tsFiles(join(root, part))) {
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const specifier = m[1]!;
      const target = relative(root, resolve(dirname(file), specifier));
      // The allowed folder the target lies in, the longest first (local/host before local).
      const top = allowed.find((a) => target === a || target.startsWith(a + sep));
      if (target.startsWith("..") || top === undefined) {
        const reached = allowed.some((a) => a.includes(sep)) ? target.split(sep).slice(0, 2).join(sep) : (target.split(sep)[0] ?? "");
        out.push({ file: relative(root, file), specifier, reaches: target.startsWith("..") ? "outside the repository" : `${reached}/` });
      }
    }
  }
  return out;
}
