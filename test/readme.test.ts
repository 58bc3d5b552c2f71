import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../src/config";

const readme = readFileSync(path.resolve(__dirname, "../README.md"), "utf8");

describe("README", () => {
  it("starts with the two commands", () => {
    const head = readme.split("\n").slice(0, 8).join("\n");
    expect(head).toContain("npm ci && npm run local");
    expect(head).toContain("npm ci && npm test");
  });

  it("documents every setting with the code's default", () => {
    for (const [name, spec] of Object.entries(SETTINGS)) {
      const row = readme.split("\n").find((l) => l.startsWith(`| \`${name}\` |`));
      expect(row, name).toBeDefined();
      if (spec.default) expect(row, name).toContain(`\`${spec.default}\``);
    }
  });
});
