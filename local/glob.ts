import { readdirSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/**
 * Expands a package.json `main`-style glob (`dist/src/functions/*.js`) relative to `baseDir`. Node 20 has no
 * `fs.glob`, and the host only needs `*`, `?` and `**` segments, so this is the whole matcher. Sorted, absolute.
 */
export function expandGlob(pattern: string, baseDir: string): string[] {
  const absolute = isAbsolute(pattern) ? pattern : resolve(baseDir, pattern);
  const parts = absolute.split(/[\\/]+/);
  const root = parts[0] === "" ? "/" : `${parts[0]}/`;
  const out = new Set<string>();
  walk(root, parts.slice(1), out);
  return [...out].sort();
}

function segmentRegExp(segment: string): RegExp {
  const body = segment.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]");
  return new RegExp(`^${body}$`);
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function walk(dir: string, rest: string[], out: Set<string>): void {
  const [head, ...tail] = rest;
  if (head === undefined) {
    out.add(dir);
    return;
  }
  if (head === "**") {
    walk(dir, tail, out);
    for (const entry of safeReaddir(dir)) if (isDir(join(dir, entry))) walk(join(dir, entry), rest, out);
    return;
  }
  if (!/[*?]/.test(head)) {
    const next = join(dir, head);
    if (tail.length === 0 ? safeExists(next) : isDir(next)) walk(next, tail, out);
    return;
  }
  const re = segmentRegExp(head);
  for (const entry of safeReaddir(dir)) {
    if (!re.test(entry)) continue;
    const next = join(dir, entry);
    if (tail.length === 0 ? !isDir(next) : isDir(next)) walk(next, tail, out);
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function safeExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
