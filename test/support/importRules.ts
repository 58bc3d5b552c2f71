import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** Which top-level folders each part of the repository may import from (relative imports only; packages are free). */
export const ALLOWED_IMPORTS: Record<string, readonly string[]> = {
  src: ["src"],
  sim: ["sim"],
  local: ["local", "src", "sim"],
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
      const top = target.split(sep)[0] ?? "";
      if (target.startsWith("..") || !allowed.includes(top))
        out.push({ file: relative(root, file), specifier, reaches: target.startsWith("..") ? "outside the repository" : `${top}/` });
    }
  }
  return out;
}
