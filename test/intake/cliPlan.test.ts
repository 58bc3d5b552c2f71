import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/main";
import { DEMO } from "../support/harness";
import { APP_DIR, startIntakeApp, type IntakeApp } from "./support";

/** `poolsync plan` and `poolsync declare --dry-run`, the built CLI against a running runtime and the simulator. */

const CLI = join(APP_DIR, "dist/src/cli/main.js");
let app: IntakeApp;

function poolsync(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, POOLSYNC_URL: app.url, POOLSYNC_KEY: "" }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  app = await startIntakeApp({ reconcile: true });
});
afterAll(async () => {
  await app?.stop();
});

describe("poolsync plan and declare --dry-run", () => {
  it("declare --dry-run prints what would be written on which ETag, and stores nothing", async () => {
    const r = await poolsync(
      "declare",
      "--dry-run",
      "--scale-set",
      DEMO.scaleSetId,
      "--pool",
      DEMO.poolId,
      "--state",
      "present",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("dry run: nothing stored, queued or written");
    expect(lines[1]).toBe(`would store: present ${DEMO.poolId} on ${DEMO.scaleSetId}`);
    expect(lines[2]).toMatch(
      new RegExp(`^plan for ${DEMO.scaleSetId}: 3 writes \\(1 declaration; based on ARM, oldest 0 s old\\)$`),
    );
    expect(lines[3]).toMatch(/^ {2}model \/subscriptions\/\S+\/etag-k8s-mp-0 {2}If-Match "\d+" {2}\(arm, 0 s old\)$/);
    expect(lines[4]).toBe(`    etag-k8s-mp-0-nic-0/ipConfig0  + ${DEMO.poolId.toLowerCase()}`);
    expect(lines.filter((l) => l.startsWith("  instance "))).toHaveLength(2);

    const status = await poolsync("status", "--scale-set", DEMO.scaleSetId);
    expect(status.stdout).toContain("no declarations");
  });

  it("plan TARGET_ID prints the stored declarations' plan; plan without one is a usage error", async () => {
    const r = await poolsync("plan", DEMO.scaleSetId);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout.trim()).toMatch(
      new RegExp(
        `^plan for ${DEMO.scaleSetId}: nothing to write \\(0 declarations; based on nothing read, oldest 0 s old\\)$`,
      ),
    );
    const bad = await poolsync("plan");
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toContain("plan needs a target ID");
  });
});
