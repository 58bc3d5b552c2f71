import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Issue 45: every module of src/ with logic has a unit test file that names it (`<module>.test.ts` anywhere under
 * test/; most sit in the folder of the same name). The modules without one are listed here with why: a new module
 * comes with its test, and one that gets its test leaves this list (the test fails until it does).
 */
const WITHOUT_LOGIC: Record<string, string> = {
  "src/core/ports.ts": "interfaces only",
  "src/core/result.ts": "the Result type and its two constructors",
  "src/core/targetPasses.ts": "interfaces only",
  "src/intake/observation.ts": "types only",
};

/** Not yet: a module with logic that has no file of its own (empty: every one has, since 2026-12-07). */
const NOT_YET: string[] = [];

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p, suffix) : e.name.endsWith(suffix) ? [p] : [];
  });
}

describe("a unit test named for each module", () => {
  const root = process.cwd();
  const tested = new Set(files(path.join(root, "test"), ".test.ts").map((f) => path.basename(f, ".test.ts")));
  const modules = files(path.join(root, "src"), ".ts")
    .filter((f) => !f.endsWith(".d.ts"))
    .map((f) => path.relative(root, f).split(path.sep).join("/"));

  it("every module of src/ with logic has one, but those listed as not yet", () => {
    const without = modules.filter((m) => !tested.has(path.basename(m, ".ts")) && !(m in WITHOUT_LOGIC));
    expect(without.sort()).toEqual([...NOT_YET].sort());
  });

  it("the lists name modules that exist (a module renamed or removed leaves them)", () => {
    for (const m of [...NOT_YET, ...Object.keys(WITHOUT_LOGIC)]) expect(modules).toContain(m);
  });
});
