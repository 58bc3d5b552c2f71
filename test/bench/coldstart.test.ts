import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COLDSTART_FUNCTIONS } from "../../bench/coldstart";

describe("the cold-start benchmark", () => {
  it("invokes every function the app registers, each in a fresh process (seven, not the four of one per trigger)", () => {
    const functions = readdirSync(join(__dirname, "..", "..", "src", "functions"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => f.replace(/\.ts$/, ""));
    expect([...COLDSTART_FUNCTIONS].sort()).toEqual(functions.sort());
  });
});
