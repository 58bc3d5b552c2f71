import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../src/config";

const readme = readFileSync(path.resolve(__dirname, "../README.md"), "utf8");
const settingsDoc = readFileSync(path.resolve(__dirname, "../docs/settings.md"), "utf8");

describe("README", () => {
  it("starts with the two commands", () => {
    const head = readme.split("\n").slice(0, 8).join("\n");
    expect(head).toContain("npm ci && npm run local");
    expect(head).toContain("npm ci && npm test");
  });

  it("orients in at most 150 lines, and links the reference it moved to docs/", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(150);
    for (const doc of ["docs/settings.md", "docs/queue.md", "docs/hosts.md", "docs/how-it-works.md", "docs/faults.md"])
      expect(readme).toContain(`](${doc}`);
  });

  it("documents every setting with the code's default (docs/settings.md)", () => {
    for (const [name, spec] of Object.entries(SETTINGS)) {
      // Prettier pads table cells: "| `NAME`   |".
      const row = settingsDoc.split("\n").find((l) => new RegExp(`^\\|\\s*\`${name}\`\\s*\\|`).test(l));
      expect(row, name).toBeDefined();
      if (spec.default) expect(row, name).toContain(`\`${spec.default}\``);
    }
  });

  it("lists every folder of the repository in its layout", () => {
    const root = path.resolve(__dirname, "..");
    const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const listed = new Set([...layout.matchAll(/^(\S+\/)\s/gm)].map((m) => m[1]));
    // "folder/**": the folder and everything below it (a tree of data files, such as the copied schemas).
    const trees = [...layout.matchAll(/^(\S+\/)\*\*\s/gm)].map((m) => m[1]!);
    const tracked = execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean);
    const folders = new Set(tracked.flatMap((f) => (f.includes("/") ? [`${path.posix.dirname(f)}/`] : [])));
    const named = (folder: string) =>
      listed.has(folder) || trees.some((t) => folder.startsWith(t)) || layout.includes(folder.replace(/\/$/, ""));
    expect([...folders].filter((f) => !named(f))).toEqual([]);
  });

  it("names six files to read first, each at its current path", () => {
    const section = /## Read these first\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? "";
    const files = [...section.matchAll(/^\d+\. `([^`]+)`/gm)].map((m) => m[1]!);
    expect(files).toHaveLength(6);
    for (const f of files) expect(existsSync(path.resolve(__dirname, "..", f)), f).toBe(true);
  });
});
