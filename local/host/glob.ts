import { resolve } from "node:path";
import { globSync } from "tinyglobby";

/**
 * Expands a package.json `main`-style glob (`dist/src/functions/*.js`) relative to `baseDir`, as the host reads
 * it: the files it matches, sorted, absolute.
 */
export function expandGlob(pattern: string, baseDir: string): string[] {
  const files = globSync(pattern, {
    cwd: baseDir,
    absolute: true,
    onlyFiles: true,
    dot: true,
    expandDirectories: false,
  });
  return files.map((f) => resolve(f)).sort();
}
