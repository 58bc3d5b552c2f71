import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expandGlob } from "../../local/host/glob";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "poolsync-glob-"));
  for (const f of [
    "dist/src/functions/a.js",
    "dist/src/functions/b.js",
    "dist/src/functions/b.js.map",
    "dist/src/functions/nested/c.js",
    "dist/src/other.js",
  ]) {
    mkdirSync(join(dir, f, ".."), { recursive: true });
    writeFileSync(join(dir, f), "");
  }
  mkdirSync(join(dir, "dist/src/functions/dir.js"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("expandGlob (package.json main, as the host reads it)", () => {
  it("matches files of one folder with *, sorted and absolute; folders are not entry points", () => {
    expect(expandGlob("dist/src/functions/*.js", dir)).toEqual([
      join(dir, "dist/src/functions/a.js"),
      join(dir, "dist/src/functions/b.js"),
    ]);
  });

  it("** crosses folders, ? is one character, an absolute pattern ignores the base, a plain path is one file", () => {
    expect(expandGlob("dist/**/c.js", dir)).toEqual([join(dir, "dist/src/functions/nested/c.js")]);
    expect(expandGlob("dist/src/functions/?.js", dir)).toEqual([
      join(dir, "dist/src/functions/a.js"),
      join(dir, "dist/src/functions/b.js"),
    ]);
    expect(expandGlob(join(dir, "dist/src/*.js"), "/")).toEqual([join(dir, "dist/src/other.js")]);
    expect(expandGlob("dist/src/other.js", dir)).toEqual([join(dir, "dist/src/other.js")]);
  });

  it("matches nothing where nothing is", () => {
    expect(expandGlob("build/*.js", dir)).toEqual([]);
  });
});
