import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

// No timing asserted here: only that the quick mode's smallest workload runs and writes results of the right shape.
const root = path.resolve(__dirname, "../..");
const out = mkdtempSync(path.join(tmpdir(), "poolsync-bench-smoke-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("npm run bench -- --quick (smallest workload)", () => {
  it("writes results.json, RESULTS.md and the SVG with the burst's figures", async () => {
    await promisify(execFile)(
      process.execPath,
      [
        require.resolve("tsx/cli"),
        "bench/main.ts",
        "--quick",
        "--only=burstOne",
        "--strategies=poolsync",
        `--out=${out}`,
      ],
      {
        cwd: root,
        timeout: 90_000,
      },
    );
    const results = JSON.parse(readFileSync(path.join(out, "results.quick.json"), "utf8")) as {
      mode: string;
      workloads: {
        burstOne: {
          poolsync: {
            runs: Array<Record<string, unknown>>;
            summary: Record<string, { median: number; min: number; max: number }>;
          };
          bound: { boundS: number };
        };
      };
    };
    expect(results.mode).toBe("quick");
    const b = results.workloads.burstOne;
    expect(b.poolsync.runs).toHaveLength(1);
    expect(b.poolsync.runs[0]).toMatchObject({ strategy: "poolsync", changes: 20, converged: 20 });
    for (const field of ["convergeS", "modelWrites", "instanceWrites", "reads", "status429"]) {
      expect(Number.isFinite(b.poolsync.summary[field]?.median), field).toBe(true);
    }
    expect(b.bound.boundS).toBeGreaterThan(0);
    expect(readFileSync(path.join(out, "RESULTS.quick.md"), "utf8")).toContain("## Targets");
    expect(readFileSync(path.join(out, "convergence.quick.svg"), "utf8")).toMatch(/^<svg /);
  }, 120_000);

  // The latency workload at 1x, a quarter of a real minute per strategy: the table, the targets and the accounting.
  it("runs the 1x latency workload for poolsync and a peer side by side and reports p50/p99 against the targets", async () => {
    await promisify(execFile)(
      process.execPath,
      [
        require.resolve("tsx/cli"),
        "bench/main.ts",
        "--quick",
        "--only=latency",
        "--latency-minutes=0.25",
        "--strategies=poolsync,last-writer-wins",
        `--out=${out}`,
      ],
      { cwd: root, timeout: 240_000 },
    );
    const results = JSON.parse(readFileSync(path.join(out, "results.quick.json"), "utf8")) as {
      plan: { latency: { timeScale: number; poolsyncTimeScale: number; durationMs: number; changes: number } };
      workloads: Record<string, unknown> & {
        latency: Record<string, { runs: Array<Record<string, unknown>>; summary: Record<string, { median: number }> }>;
      };
    };
    // --only merges into the results already there: the burst of the test above is kept.
    expect(results.workloads.burstOne).toBeDefined();
    expect(results.plan.latency).toMatchObject({ timeScale: 1, poolsyncTimeScale: 1, durationMs: 15_000, changes: 5 });
    for (const s of ["poolsync", "last-writer-wins"]) {
      const run = results.workloads.latency[s]?.runs[0];
      expect(run, s).toMatchObject({ strategy: s, changes: 5 });
      expect(Array.isArray(run?.unconverged), s).toBe(true);
      expect(Number.isFinite(results.workloads.latency[s]?.summary.p50S?.median), s).toBe(true);
    }
    const md = readFileSync(path.join(out, "RESULTS.quick.md"), "utf8");
    expect(md).toContain("## 3b. Latency at 1×");
    expect(md).toContain("poolsync's p50 no slower than the fastest peer's");
    expect(md).toContain("Every change accounted for:");
  }, 300_000);
});
