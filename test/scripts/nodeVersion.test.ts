import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const major = (v: string) => Number(/(\d+)/.exec(v)?.[1]);

describe("the Node the project runs on", () => {
  it("is the registry's node package that package.json pins, the major the engines field and the template name", () => {
    const pinned = pkg.devDependencies.node;
    expect(pinned, "devDependencies.node").toMatch(/^\d+\.\d+\.\d+$/);
    expect(process.version).toBe(`v${pinned}`);
    expect(pkg.engines.node).toBe(`>=${major(pinned!)}`);
    // The deployed app runs the same major: the Flex Consumption runtime in the template.
    const template = readFileSync(join(root, "infra", "main.json"), "utf8");
    expect(template).toMatch(new RegExp(`"name":\\s*"node",\\s*"version":\\s*"${major(pinned!)}"`));
  });
});
