import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { importViolations } from "./support/importRules";

const ROOT = resolve(__dirname, "..");

describe("what each part of the repository may import", () => {
  it("src/ (the deployed app) imports nothing outside src/", () => {
    expect(importViolations(ROOT, "src")).toEqual([]);
  });

  it("sim/ (the simulator) imports nothing from the app or the tests", () => {
    expect(importViolations(ROOT, "sim")).toEqual([]);
  });

  it("devkit/ (what local, test and bench share) imports only sim/ and itself", () => {
    expect(importViolations(ROOT, "devkit")).toEqual([]);
  });

  it("local/ imports only src/, sim/, devkit/ and itself", () => {
    expect(importViolations(ROOT, "local")).toEqual([]);
  });

  it("local/host/ (the Functions host emulation) imports only itself and devkit/", () => {
    expect(importViolations(ROOT, join("local", "host"))).toEqual([]);
  });

  describe("the rule fails when broken", () => {
    const tree = mkdtempSync(join(tmpdir(), "poolsync-layout-"));
    afterAll(() => rmSync(tree, { recursive: true, force: true }));

    it("names each file of src/ that imports from sim/, local/, test/, bench/ or beyond the repository", () => {
      mkdirSync(join(tree, "src", "reconcile"), { recursive: true });
      const lines = [
        'import { startArmSimulator } from "../../sim";',
        'import type { LocalOptions } from "../../local/localOptions";',
        'const harness = require("../../test/support/harness");',
        'const bench = await import("../../bench/world");',
        'import "../../../beside-the-clone/facts";',
        'import { parseScaleSetId } from "../core/resourceIds";',
        'import { z } from "zod";',
      ];
      writeFileSync(join(tree, "src", "reconcile", "bad.ts"), lines.join("\n"));
      expect(importViolations(tree, "src")).toEqual([
        { file: join("src", "reconcile", "bad.ts"), specifier: "../../sim", reaches: "sim/" },
        { file: join("src", "reconcile", "bad.ts"), specifier: "../../local/localOptions", reaches: "local/" },
        { file: join("src", "reconcile", "bad.ts"), specifier: "../../test/support/harness", reaches: "test/" },
        { file: join("src", "reconcile", "bad.ts"), specifier: "../../bench/world", reaches: "bench/" },
        { file: join("src", "reconcile", "bad.ts"), specifier: "../../../beside-the-clone/facts", reaches: "outside the repository" },
      ]);
    });

    it("names each file of local/host/ that imports the app, the simulator, the stack or the demo", () => {
      mkdirSync(join(tree, "local", "host"), { recursive: true });
      const lines = [
        'import { loadConfig } from "../../src/config";',
        'import { startArmSimulator } from "../../sim";',
        'import { startLocalStack } from "../stack/stack";',
        'import { ensureAzurite } from "../../devkit/azurite";',
        'import { parseSchedule } from "./ncrontab";',
      ];
      writeFileSync(join(tree, "local", "host", "bad.ts"), lines.join("\n"));
      expect(importViolations(tree, join("local", "host"))).toEqual([
        { file: join("local", "host", "bad.ts"), specifier: "../../src/config", reaches: "src/config/" },
        { file: join("local", "host", "bad.ts"), specifier: "../../sim", reaches: "sim/" },
        { file: join("local", "host", "bad.ts"), specifier: "../stack/stack", reaches: "local/stack/" },
      ]);
    });
  });
});
