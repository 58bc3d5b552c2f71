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
export function importViolations(
  root: string,
  part: string,
  allowed: readonly string[] = ALLOWED_IMPORTS[part] ?? [part],
): ImportViolation[] {
  const out: ImportViolation[] = [];
  for (const file of tsFiles(join(root, part))) {
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const specifier = m[1]!;
      const target = relative(root, resolve(dirname(file), specifier));
      // The allowed folder the target lies in, the longest first (local/host before local).
      const top = allowed.find((a) => target === a || target.startsWith(a + sep));
      if (target.startsWith("..") || top === undefined) {
        const reached = allowed.some((a) => a.includes(sep))
          ? target.split(sep).slice(0, 2).join(sep)
          : (target.split(sep)[0] ?? "");
        out.push({
          file: relative(root, file),
          specifier,
          reaches: target.startsWith("..") ? "outside the repository" : `${reached}/`,
        });
      }
    }
  }
  return out;
}

/**
 * The layers inside src/, lowest first: a folder may import its own files and any folder of a lower layer, never one
 * of its own layer or above. `config` is src/config.ts. So: core ← config, pacing, telemetry ← azure, reconcile, intake
 * ← app, cli ← functions (the edges, the reconcile and the intake do not import one another; `cli` is the HTTP API's
 * client program, beside the composition root; `telemetry` holds the instruments every layer above records through).
 */
export const SRC_LAYERS: readonly (readonly string[])[] = [
  ["core"],
  ["config", "pacing", "telemetry"],
  ["azure", "reconcile", "intake"],
  ["app", "cli"],
  ["functions"],
];

export interface LayerViolation {
  file: string;
  specifier: string;
  /** "from → to": the folders of src/ the import crosses upwards or sideways. */
  crosses: string;
}

/** The src/ folder a path under src/ belongs to ("config" for src/config.ts). */
function srcFolder(pathUnderSrc: string): string {
  const parts = pathUnderSrc.split(sep);
  return parts.length > 1 ? parts[0]! : parts[0]!.replace(/\.ts$/, "");
}

function relativeImports(file: string): string[] {
  return [...readFileSync(file, "utf8").matchAll(IMPORT)].map((m) => m[1]!);
}

/** Every import inside `root/src` that goes sideways or upwards between src/ folders (see SRC_LAYERS). */
export function layerViolations(root: string, layers: readonly (readonly string[])[] = SRC_LAYERS): LayerViolation[] {
  const src = join(root, "src");
  const rank = new Map(layers.flatMap((folders, i) => folders.map((f) => [f, i] as const)));
  const out: LayerViolation[] = [];
  for (const file of tsFiles(src)) {
    const from = srcFolder(relative(src, file));
    for (const specifier of relativeImports(file)) {
      const target = relative(src, resolve(dirname(file), specifier));
      if (target.startsWith("..")) continue; // leaving src/ is importViolations' business
      const to = srcFolder(target);
      if (to === from) continue;
      const a = rank.get(from);
      const b = rank.get(to);
      if (a === undefined || b === undefined || b >= a)
        out.push({ file: relative(root, file), specifier, crosses: `${from} → ${to}` });
    }
  }
  return out;
}

/** The .ts file an import names (`./x` → x.ts or x/index.ts), or undefined when it names none. */
function resolveTs(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier.replace(/\.js$/, ""));
  for (const candidate of [`${base}.ts`, join(base, "index.ts"), base]) {
    try {
      if (candidate.endsWith(".ts") && readFileSync(candidate)) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * Every import cycle among the files under `root/<part>` (type-only imports count too: they tie the modules'
 * meaning together just the same), each as the files around it, starting from its first file in path order.
 */
export function importCycles(root: string, part: string): string[][] {
  const files = tsFiles(join(root, part)).sort();
  const edges = new Map(
    files.map((f) => [
      f,
      [...new Set(relativeImports(f).flatMap((s) => resolveTs(f, s) ?? []))].filter((t) =>
        t.startsWith(join(root, part)),
      ),
    ]),
  );
  // Tarjan's strongly connected components: every component of more than one file (or a file importing itself) is a
  // cycle.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v))
        cycles.push(component.map((f) => relative(root, f)).sort());
    }
  };
  for (const f of files) if (!indexOf.has(f)) visit(f);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
