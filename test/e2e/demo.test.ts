import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { APP_DIR } from "./support";

const run = promisify(execFile);

describe("npm run demo (the built demo as a process)", () => {
  it("replays the 412 race, keeps the other writer's ipConfig1 through present and absent, and exits 0", async () => {
    const { stdout } = await run(process.execPath, [join(APP_DIR, "dist/local/demo/demo.js")], {
      cwd: APP_DIR,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
      timeout: 45_000,
    }).catch((err: { stdout?: string; stderr?: string; code?: number }) => {
      throw new Error(`demo exited with ${String(err.code)}\n${err.stdout ?? ""}\n${err.stderr ?? ""}`);
    });
    expect(stdout).toContain("412 Precondition Failed: someone wrote since our read; re-read and retry");
    expect(stdout).toMatch(/✔ poolsync's stale If-Match writes were refused \(412 ×\d+\), it re-read and retried/);
    expect(stdout).toContain("✔ model: our pool on ipConfig0 and the other writer's ipConfig1 both survive");
    expect(stdout).toContain("✔ model: our pool is gone, ipConfig1 still survives");
    expect(stdout).toMatch(/cost: \d+ ARM calls: /);
    expect(stdout).not.toContain("✘");
    expect(stdout.trimEnd().split("\n").at(-1)).toBe("End state is right: no update was lost. (exit 0)");
  });
});
