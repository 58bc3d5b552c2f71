import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { importCycles, importViolations, layerViolations } from "./support/importRules";

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

  it("inside src/, imports go only downwards: core ← config, pacing ← azure, reconcile, intake ← app, cli ← functions", () => {
    expect(layerViolations(ROOT)).toEqual([]);
  });

  it.each(["src", "sim", "local"])("no import cycle among the files of %s/", (part) => {
    expect(importCycles(ROOT, part)).toEqual([]);
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
        {
          file: join("src", "reconcile", "bad.ts"),
          specifier: "../../../beside-the-clone/facts",
          reaches: "outside the repository",
        },
      ]);
    });

    it("names each import of src/ that goes sideways or upwards between its folders", () => {
      const layered = mkdtempSync(join(tmpdir(), "poolsync-layers-"));
      try {
        for (const dir of ["core", "pacing", "azure", "reconcile", "intake", "app", "functions"])
          mkdirSync(join(layered, "src", dir), { recursive: true });
        writeFileSync(join(layered, "src", "config.ts"), 'import { parseScopes } from "./core/scopes";');
        writeFileSync(
          join(layered, "src", "core", "ports.ts"),
          'import type { Config } from "../config";\nimport { x } from "./y";',
        );
        writeFileSync(
          join(layered, "src", "azure", "rateLimits.ts"),
          'import type { WritePacer } from "../reconcile/writePacer";\nimport { p } from "../pacing/p";',
        );
        writeFileSync(
          join(layered, "src", "intake", "services.ts"),
          'import type { Services } from "../app/services";\nimport type { Config } from "../config";',
        );
        writeFileSync(
          join(layered, "src", "functions", "status.ts"),
          'import { services } from "../app/services";\nimport { handle } from "../intake/statusHttp";',
        );
        expect(layerViolations(layered)).toEqual([
          {
            file: join("src", "azure", "rateLimits.ts"),
            specifier: "../reconcile/writePacer",
            crosses: "azure → reconcile",
          },
          { file: join("src", "core", "ports.ts"), specifier: "../config", crosses: "core → config" },
          { file: join("src", "intake", "services.ts"), specifier: "../app/services", crosses: "intake → app" },
        ]);
      } finally {
        rmSync(layered, { recursive: true, force: true });
      }
    });

    it("names the files of each import cycle, type-only imports included, and the files outside any cycle not at all", () => {
      const cyclic = mkdtempSync(join(tmpdir(), "poolsync-cycles-"));
      try {
        mkdirSync(join(cyclic, "sim", "http"), { recursive: true });
        writeFileSync(join(cyclic, "sim", "state.ts"), 'import { vms } from "./vms";');
        writeFileSync(
          join(cyclic, "sim", "vms.ts"),
          'import type { State } from "./state";\nimport { leaf } from "./leaf";',
        );
        writeFileSync(join(cyclic, "sim", "leaf.ts"), "export const leaf = 1;");
        writeFileSync(join(cyclic, "sim", "http", "compute.ts"), 'import { nic } from "./network";');
        writeFileSync(
          join(cyclic, "sim", "http", "network.ts"),
          'import { vmss } from "./compute.js";\nimport { leaf } from "../leaf";',
        );
        expect(importCycles(cyclic, "sim")).toEqual([
          [join("sim", "http", "compute.ts"), join("sim", "http", "network.ts")],
          [join("sim", "state.ts"), join("sim", "vms.ts")],
        ]);
      } finally {
        rmSync(cyclic, { recursive: true, force: true });
      }
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
