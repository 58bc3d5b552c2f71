import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config";

/**
 * What the docs (README.md and docs/*.md) say about the tree, checked against the tree, so that a renamed file, a
 * new function or a moved setting makes a test fail instead of a doc lie (issue 45). What is already checked
 * elsewhere is not repeated: docs/settings.md is rendered from SETTINGS (test/scripts/settingsDoc.test.ts), and the
 * README's layout names every folder and its six first files exist (test/readme.test.ts).
 */
const ROOT = path.resolve(__dirname, "..", "..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const DOCS = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const tracked = execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean);
const trackedFiles = new Set(tracked);
const trackedFolders = new Set(tracked.flatMap((f) => ancestors(f)));
const trackedNames = new Set(tracked.map((f) => path.posix.basename(f)));

function ancestors(file: string): string[] {
  const out: string[] = [];
  for (let dir = path.posix.dirname(file); dir !== "."; dir = path.posix.dirname(dir)) out.push(dir);
  return out;
}

/** Every `code span` of a doc, with its line number. */
function codeSpans(doc: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  read(doc)
    .split("\n")
    .forEach((line, i) => {
      for (const m of line.matchAll(/`([^`]+)`/g)) out.push({ text: m[1]!.trim(), line: i + 1 });
    });
  return out;
}

/** The folders of the repository a path in the docs starts with; anything else in backticks is prose or a URL path. */
const REPO_TOPS = ["src", "sim", "local", "devkit", "test", "bench", "docs", "infra", "scripts", ".github", ".ci"];
/** A bare file name with one of these endings names a file of the tree (`services.ts`, `host.json`). */
const FILE_ENDING = /\.(ts|mts|mjs|js|json|md|ya?ml|bicep|pem|kql)$/;
/** Named in the docs on purpose, absent from the tree on purpose. */
const NOT_IN_TREE: Record<string, string> = {
  "local.settings.json": "the developer's own settings file, git-ignored (docs/local.md tells how to make it)",
};

/** A repository path a code span names (`src/core/clouds.ts`, `sim/README.md`, `local/host/`), or undefined. */
function repoPath(span: string): string | undefined {
  const text = span.replace(/:\d+(-\d+)?$/, ""); // `file.ts:120` names a line
  if (!/^[\w.\-/]+$/.test(text)) return undefined; // globs, placeholders, commands, URLs
  if (text.includes("/")) return REPO_TOPS.includes(text.split("/")[0]!) ? text : undefined;
  return FILE_ENDING.test(text) ? text : undefined;
}

function existsInTree(p: string): boolean {
  const clean = p.replace(/\/$/, "");
  return p.includes("/") ? trackedFiles.has(clean) || trackedFolders.has(clean) : trackedNames.has(clean);
}

/** The code the docs may name identifiers of (data trees of copied schemas and recordings left out). */
const CODE_FILES = tracked.filter(
  (f) =>
    /\.(ts|mts|mjs|json|ya?ml|kql)$/.test(f) &&
    !f.startsWith("test/fixtures/azure/") &&
    !f.startsWith("infra/schemas/") &&
    !f.startsWith("infra/rest-api-types/"),
);
/** Named in the docs as the words of a system poolsync talks to, not of its code. */
const NOT_OUR_IDENTIFIERS: Record<string, string> = {
  deadLetterReason: "Event Grid's dead-letter property, named for operators who turn dead-lettering on",
  AppTraces: "the Log Analytics workspace's name of Application Insights' traces table",
  AppDependencies: "the Log Analytics workspace's name of Application Insights' dependencies table",
};

/** The functions the app registers, by the file that registers them: `app.<trigger>("name", …)` in src/functions/. */
function registeredFunctions(): { file: string; trigger: string; name: string; route?: string; methods?: string }[] {
  return readdirSync(path.join(ROOT, "src", "functions"))
    .filter((f) => f.endsWith(".ts"))
    .flatMap((f) => {
      const text = read(`src/functions/${f}`);
      return [...text.matchAll(/\bapp\.(\w+)\(\s*"([^"]+)"/g)].map((m) => ({
        file: f,
        trigger: m[1]!,
        name: m[2]!,
        ...(/\broute:\s*"([^"]+)"/.exec(text) ? { route: /\broute:\s*"([^"]+)"/.exec(text)![1]! } : {}),
        ...(/\bmethods:\s*\[([^\]]*)\]/.exec(text)
          ? { methods: /\bmethods:\s*\[([^\]]*)\]/.exec(text)![1]!.replace(/[\s"]/g, "") }
          : {}),
      }));
    });
}

describe("the docs name only what the tree holds", () => {
  it("every repository path in backticks or a relative link exists (a renamed or deleted file fails here)", () => {
    const missing: string[] = [];
    for (const doc of DOCS) {
      for (const { text, line } of codeSpans(doc)) {
        const p = repoPath(text);
        if (p && !NOT_IN_TREE[p] && !existsInTree(p)) missing.push(`${doc}:${line} \`${text}\``);
      }
      for (const m of read(doc).matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        const p = path.posix.normalize(path.posix.join(path.posix.dirname(doc), target));
        if (!existsInTree(p.includes("/") ? p : `./${p}`) && !trackedFiles.has(p))
          missing.push(`${doc} link ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("the path check is strict enough to catch a rename and loose enough to pass prose", () => {
    expect(repoPath("src/reconcile/reconcileRunner.ts")).toBe("src/reconcile/reconcileRunner.ts");
    expect(existsInTree("src/reconcile/reconcileRunner.ts")).toBe(true);
    expect(existsInTree("src/reconcile/reconcileRunnr.ts")).toBe(false);
    expect(existsInTree("passStop.ts")).toBe(trackedNames.has("passStop.ts"));
    expect(existsInTree("noSuchModule.ts")).toBe(false);
    expect(repoPath("src/app/services.ts:282")).toBe("src/app/services.ts");
    for (const prose of ["application/json", "-h/--help", "dist/src/functions/*.js", "/api/status", "If-Match"])
      expect(repoPath(prose), prose).toBeUndefined();
  });

  it("every code identifier the docs name in backticks is one the code has (camelCase and PascalCase words)", () => {
    const words = new Set(CODE_FILES.flatMap((f) => read(f).match(/\b\w+\b/g) ?? []));
    const unknown: string[] = [];
    for (const doc of DOCS)
      for (const { text, line } of codeSpans(doc)) {
        const word = text.replace(/\(\)$/, "");
        if (!/^([a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)$/.test(word) || NOT_OUR_IDENTIFIERS[word]) continue;
        if (!words.has(word)) unknown.push(`${doc}:${line} \`${text}\``);
      }
    expect(unknown).toEqual([]);
  });

  it("a symbol named as a file's (`X` in `file.ts`, `file.ts`'s `X`, `file.ts` (`X`)) is declared in that file", () => {
    const pairs: { doc: string; file: string; symbol: string }[] = [];
    const id = "([A-Za-z_]\\w*)(?:\\(\\))?";
    const file = "([\\w./-]+\\.(?:ts|mts))";
    const forms = [
      new RegExp(`\`${id}\` in \`${file}\``, "g"),
      new RegExp(`\`${file}\`'s \`${id}\``, "g"),
      new RegExp(`\`${file}\` \\(\`${id}\``, "g"),
    ];
    for (const doc of DOCS) {
      const text = read(doc);
      for (const m of text.matchAll(forms[0]!)) pairs.push({ doc, symbol: m[1]!, file: m[2]! });
      for (const form of forms.slice(1))
        for (const m of text.matchAll(form)) pairs.push({ doc, file: m[1]!, symbol: m[2]! });
    }
    // Only code symbols: a setting beside the file that reads it is not a claim about its declarations.
    const claims = pairs.filter(
      (p) => !(p.symbol in SETTINGS) && !/^(POOLSYNC|ARM|AZURE|AzureWebJobs)_/.test(p.symbol),
    );
    expect(claims.length).toBeGreaterThan(0);
    const wrong = claims.filter(({ file, symbol }) => {
      const candidates = file.includes("/") ? [file] : tracked.filter((f) => path.posix.basename(f) === file);
      return !candidates.some(
        (f) =>
          trackedFiles.has(f) &&
          new RegExp(`\\b(function|class|const|let|interface|type|enum)\\s+${symbol}\\b`).test(read(f)),
      );
    });
    expect(wrong).toEqual([]);
  });
});

describe("the docs list what the app registers", () => {
  const functions = registeredFunctions();

  it("src/functions/ holds one file per function, as the README's layout says", () => {
    const files = readdirSync(path.join(ROOT, "src", "functions")).filter((f) => f.endsWith(".ts"));
    expect(functions.map((f) => f.file).sort()).toEqual(files.sort());
  });

  it("docs/local.md's startup listing names every registered function with its trigger, and no other", () => {
    const listing = /\nFunctions:\n\n([\s\S]*?)\n\n/.exec(read("docs/local.md"))?.[1] ?? "";
    const rows = listing.split("\n").filter((l) => /^\s+\w+: /.test(l));
    expect(rows.map((r) => /^\s+(\w+):/.exec(r)![1]).sort()).toEqual(functions.map((f) => f.name).sort());
    const trigger: Record<string, string> = {
      storageQueue: "queueTrigger",
      timer: "timerTrigger",
      eventGrid: "eventGridTrigger",
    };
    for (const f of functions) {
      const row = rows.find((l) => l.trim().startsWith(`${f.name}:`));
      if (f.trigger === "http") expect(row, f.name).toContain(`[${f.methods ?? "GET,POST"}] `);
      expect(row, f.name).toContain(f.trigger === "http" ? `/api/${f.route ?? f.name}` : trigger[f.trigger]);
    }
  });

  it("docs/api.md documents every HTTP function's route (its literal part: `memberships/{action?}` is `/api/memberships`)", () => {
    const api = read("docs/api.md");
    for (const f of functions.filter((fn) => fn.trigger === "http")) {
      const literal = (f.route ?? f.name).split("{")[0]!.replace(/\/$/, "");
      expect(api, f.name).toContain(`/api/${literal}`);
    }
  });

  it("the README names every trigger function the flow runs (queue, Event Grid, timer)", () => {
    const readme = read("README.md");
    for (const f of functions.filter((fn) => fn.trigger !== "http")) expect(readme, f.name).toContain(f.name);
  });
});

describe("the docs name only settings the code reads", () => {
  const known = new Set(Object.keys(SETTINGS));
  /** Beside the app's SETTINGS: the local runtime's, the CLI's and the test suite's own variables. */
  const code = tracked.filter((f) => /^(src|local|devkit|test|bench|scripts)\/.*\.(ts|mts)$/.test(f)).map(read);
  const readByCode = (name: string) => code.some((t) => new RegExp(`\\b${name}\\b`).test(t));

  it("every POOLSYNC_ name in the docs is one of SETTINGS or a variable some code reads", () => {
    const strays: string[] = [];
    for (const doc of DOCS)
      for (const m of read(doc).matchAll(/\bPOOLSYNC_[A-Z0-9_]*[A-Z0-9]\b/g))
        if (!known.has(m[0]) && !readByCode(m[0])) strays.push(`${doc}: ${m[0]}`);
    expect([...new Set(strays)]).toEqual([]);
  });

  it("a required setting is not said to have a default where the docs describe it", () => {
    const required = Object.entries(SETTINGS)
      .filter(([, spec]) => spec.default === undefined)
      .map(([name]) => name);
    const claims: string[] = [];
    for (const doc of DOCS.filter((d) => d !== "docs/settings.md")) {
      // A paragraph is about a setting when it or its section's heading names it.
      for (const section of read(doc).split(/\n(?=#+ )/)) {
        const heading = section.split("\n")[0]!;
        for (const paragraph of section.split(/\n\s*\n/).map((p) => p.replace(/\s+/g, " ")))
          for (const name of required)
            if (
              (heading.includes(name) || paragraph.includes(name)) &&
              /\(the default\)|\bby default\b|\bthe default (is|allows)\b/i.test(paragraph)
            )
              claims.push(`${doc} (${name}): ${paragraph.trim().slice(0, 200)}`);
      }
    }
    expect(claims).toEqual([]);
  });

  it("POOLSYNC_CACHE_TABLE's meaning names every partition the shared table holds", () => {
    const doc = SETTINGS.POOLSYNC_CACHE_TABLE.doc;
    const partitions = tracked
      .filter((f) => /^src\/azure\/[^/]+\.ts$/.test(f) && f !== "src/azure/oldLayoutSweep.ts")
      .flatMap((f) => [...read(f).matchAll(/^(?:export )?const \w+ = "(~\w+)";/gm)].map((m) => m[1]!));
    expect(partitions.length).toBeGreaterThan(0);
    for (const p of partitions) expect(doc, p).toContain(`"${p}"`);
  });

  it("every setting local/host/ reads of poolsync's is named in docs/local.md (the host emulation knows them)", () => {
    const local = read("docs/local.md");
    const host = tracked.filter((f) => /^local\/host\/.*\.ts$/.test(f)).map(read);
    const names = new Set(host.flatMap((t) => t.match(/\bPOOLSYNC_[A-Z0-9_]+\b/g) ?? []));
    expect(names.size).toBeGreaterThan(0);
    for (const n of names) expect(local, n).toContain(n);
  });
});

describe("the README's layout matches the tree", () => {
  const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(read("README.md"))?.[1] ?? "";

  it("every folder it lists exists, and every test/ folder it names", () => {
    const listed = [...layout.matchAll(/^(\S+?\/)(\*\*)?\s/gm)].map((m) => m[1]!.replace(/\/$/, ""));
    const named = [...layout.matchAll(/\b(test\/\w+)\b/g)].map((m) => m[1]!);
    expect(listed.length).toBeGreaterThan(10);
    expect([...listed, ...named].filter((p) => !trackedFolders.has(p))).toEqual([]);
  });

  it("claims no mirroring of src/ by test/ that the tree does not have", () => {
    // Tests are organised by behaviour; most modules of src/ have no test file by their name (issue 45).
    const srcModules = tracked.filter((f) => /^src\/.*\.ts$/.test(f)).map((f) => path.posix.basename(f, ".ts"));
    const testNames = new Set(
      tracked.filter((f) => f.endsWith(".test.ts")).map((f) => path.posix.basename(f, ".test.ts")),
    );
    const mirrored = srcModules.filter((m) => testNames.has(m)).length / srcModules.length;
    if (mirrored < 0.9) expect(layout).not.toMatch(/mirror/i);
  });

  it("how-it-works' newcomer's trace names at most 12 files, each once, all in the tree", () => {
    const doc = read("docs/how-it-works.md");
    const section = doc.slice(
      doc.indexOf("## A newcomer's trace"),
      doc.indexOf("\n## ", doc.indexOf("## A newcomer's trace") + 3),
    );
    const steps = [...section.matchAll(/^\d+\. `([^`]+)`/gm)].map((m) => m[1]!);
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.length).toBeLessThanOrEqual(12);
    expect(new Set(steps).size).toBe(steps.length);
    expect(steps.filter((f) => !trackedFiles.has(f))).toEqual([]);
  });
});
