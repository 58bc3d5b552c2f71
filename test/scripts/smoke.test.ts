import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePorts } from "../../devkit/freePorts";
import { DEMO_SUBSCRIPTION } from "../../sim/seed";
import { parseSmokeArgs, runSmoke, type SmokeOptions } from "../../scripts/smoke";

const ROOT = join(__dirname, "..", "..");
const SCALE_SET = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`;

/**
 * `npm run local` (the built dist/local/stack/main.js) on free ports, with its own queue and tables on the shared
 * Azurite.
 */
async function startLocal(
  env: Record<string, string>,
): Promise<{ url: string; armEndpoint: string; stop: () => Promise<void> }> {
  const [port, simPort] = await freePorts(2);
  const tag = `smoke${process.pid}${Date.now() % 100000}`;
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, "dist", "local", "stack", "main.js")], {
    cwd: ROOT,
    env: {
      ...process.env,
      POOLSYNC_LOCAL_PORT: String(port),
      POOLSYNC_LOCAL_SIM_PORT: String(simPort),
      POOLSYNC_QUEUE: `${tag}q`,
      POOLSYNC_MEMBERSHIPS_TABLE: `${tag}mem`,
      POOLSYNC_CACHE_TABLE: `${tag}cache`,
      // The smoke run's --test-principal: honoured only in the local runtime's explicit test mode.
      POOLSYNC_LOCAL_TEST_PRINCIPALS: "true",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run local did not start in 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.includes("is ready on")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`npm run local exited (${code}):\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    armEndpoint: `https://127.0.0.1:${simPort}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGINT");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

const running: { stop: () => Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

async function smokeAgainst(
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ lines: string[]; result: Promise<unknown> }> {
  const local = await startLocal(env);
  running.push(local);
  const lines: string[] = [];
  const options: SmokeOptions = {
    ...parseSmokeArgs(
      [
        "--url",
        local.url,
        "--scale-set",
        SCALE_SET,
        "--arm-endpoint",
        local.armEndpoint,
        "--arm-ca",
        join(ROOT, "sim", "tls", "cert.pem"),
        "--test-principal",
      ],
      {},
    ),
    timeoutMs,
    pollMs: 250,
    print: (l) => lines.push(l),
  };
  return { lines, result: runSmoke(options) };
}

describe("npm run smoke against npm run local with its authentication on (POOLSYNC_AUTH=entra)", () => {
  it("passes: 401 without a caller, 200 with one, and the tag write's ARM event shows in the status within a minute", async () => {
    const { lines, result } = await smokeAgainst({ POOLSYNC_AUTH: "entra" }, 60_000);
    const { eventSeenAfterMs } = (await result) as { eventSeenAfterMs: number };
    expect(lines[0]).toBe("ok   unauthenticated GET /api/status → 401");
    expect(lines[1]).toBe("ok   authenticated GET /api/status → 200");
    expect(lines.at(-1)).toMatch(
      /^ok {3}the ARM event reached onResourceEvent: .*ResourceWriteSuccess Microsoft\.Compute\/virtualMachineScaleSets\/write/,
    );
    expect(eventSeenAfterMs).toBeLessThan(60_000);
  }, 120_000);

  it("fails when no ARM event reaches the app (no Event Grid subscription)", async () => {
    const { lines, result } = await smokeAgainst({ POOLSYNC_AUTH: "entra", POOLSYNC_LOCAL_EVENTS: "false" }, 5_000);
    await expect(result).rejects.toThrow(/no sign of the tag write's event in the status of .* within 5 s/);
    expect(lines.slice(0, 2)).toEqual([
      "ok   unauthenticated GET /api/status → 401",
      "ok   authenticated GET /api/status → 200",
    ]);
  }, 120_000);
});
