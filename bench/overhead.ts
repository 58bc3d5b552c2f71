// poolsync's own work per message: CPU (process.cpuUsage of this process only: the simulator runs in a child
// process here, Azurite in its own), Table round trips and wall time, one message at a time, no ARM latency.
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { ArmSimulator } from "../sim";
import { SIM_CA_FILE } from "../devkit/simulator";
import { readFileSync } from "node:fs";
import { startPoolsync } from "./poolsyncRun";
import { percentile, prng } from "./stats";
import { buildWorld, IP_CONFIG } from "./world";

export interface OverheadResult {
  messages: number;
  cold: PerMessage;
  warm: PerMessage;
}

export interface PerMessage {
  cpuMsMedian: number;
  cpuMsP90: number;
  tableOpsMedian: number;
  wallMsMedian: number;
  armCallsMedian: number;
}

function getJson(url: string, ca: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, method: "GET" }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve(JSON.parse(body)));
    });
    req.on("error", reject);
    req.end();
  });
}

async function startChildSim(seedFile: string): Promise<{ url: string; stop(): Promise<void> }> {
  const tsx = require.resolve("tsx/cli");
  const child = spawn(
    process.execPath,
    [
      tsx,
      path.resolve(__dirname, "../sim/cli.ts"),
      "--port",
      "0",
      "--tls",
      "--seed",
      seedFile,
      "--operation-duration-ms",
      "0",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`simulator did not start: ${out}`)), 30_000);
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => reject(new Error(`simulator exited ${code}: ${out}`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export async function runOverhead(storage: string, messages: number, seed: number): Promise<OverheadResult> {
  const world = buildWorld({ subscriptions: 1, scaleSetsPerSubscription: messages, capacity: 3, pools: 2 });
  const dir = mkdtempSync(path.join(tmpdir(), "poolsync-bench-"));
  const seedFile = path.join(dir, "seed.json");
  writeFileSync(seedFile, JSON.stringify(world.seed));
  const child = await startChildSim(seedFile);
  const ca = readFileSync(SIM_CA_FILE, "utf8");
  // Only what startPoolsync needs of a simulator: its URL; its clock is real time here (time scale 1).
  const clock = {
    now: () => Date.now(),
    sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
    timeScale: 1,
  };
  const pseudo = { url: child.url, ca, control: { clock, onEvent: () => () => undefined } } as unknown as ArmSimulator;
  // Declare window off: the message then does the whole work of a declaration (store it, reconcile, write), which
  // is what is measured; with the window on, the message only stores it and opens or joins the window (2–3 Table
  // round trips) and the reconcile runs from a message of its own. Operations end at once here: polled after 50 ms,
  // so the wall time (and the idle queue listener's CPU inside it) stays the reconcile's own.
  const p = await startPoolsync(pseudo, {
    storage,
    subscriptions: world.subscriptions,
    events: false,
    eventDelayMs: 0,
    timerEveryMs: 0,
    random: prng(seed),
    env: { POOLSYNC_DECLARE_WINDOW_SECONDS: "0", POOLSYNC_OPERATION_POLL_SECONDS: "0.05" },
  });
  const armCalls = async () => ((await getJson(`${child.url}/_sim/stats`, ca)) as { requests: number }).requests;
  const measure = async (pool: string): Promise<Array<{ cpu: number; table: number; wall: number; arm: number }>> => {
    const out = [];
    for (let i = 0; i < world.scaleSets.length; i++) {
      const ss = world.scaleSets[i] as string;
      const body = {
        v: 1,
        kind: "declare",
        scaleSetId: ss,
        backendPoolId: pool,
        ipConfiguration: IP_CONFIG,
        state: "present",
        requestId: `ovh-${pool.slice(-6)}-${i}`,
      };
      const arm0 = await armCalls();
      const t0 = process.hrtime.bigint();
      const ops0 = p.tables.ops;
      const cpu0 = process.cpuUsage();
      await p.services.handleQueueMessage(body, {
        id: `m-${i}-${pool.slice(-1)}`,
        dequeueCount: 1,
        insertionTime: new Date().toISOString(),
      });
      const cpu = process.cpuUsage(cpu0);
      out.push({
        cpu: (cpu.user + cpu.system) / 1000,
        table: p.tables.ops - ops0,
        wall: Number(process.hrtime.bigint() - t0) / 1e6,
        arm: (await armCalls()) - arm0,
      });
    }
    return out;
  };
  const summary = (xs: Array<{ cpu: number; table: number; wall: number; arm: number }>): PerMessage => ({
    cpuMsMedian: percentile(
      xs.map((x) => x.cpu),
      50,
    ),
    cpuMsP90: percentile(
      xs.map((x) => x.cpu),
      90,
    ),
    tableOpsMedian: percentile(
      xs.map((x) => x.table),
      50,
    ),
    wallMsMedian: percentile(
      xs.map((x) => x.wall),
      50,
    ),
    armCallsMedian: percentile(
      xs.map((x) => x.arm),
      50,
    ),
  });
  try {
    const pools = world.pools[0] as string[];
    // Cold: the first message for each scale set (cache empty); warm: a second pool on the same scale sets.
    const cold = await measure(pools[0] as string);
    const warm = await measure(pools[1] as string);
    return { messages, cold: summary(cold), warm: summary(warm) };
  } finally {
    await p.close();
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** runOverhead in a fresh process (bench/overheadProcess.ts): nothing an earlier workload left running is counted. */
export async function runOverheadFresh(storage: string, messages: number, seed: number): Promise<OverheadResult> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      require.resolve("tsx/cli"),
      path.resolve(__dirname, "overheadProcess.ts"),
      storage,
      String(messages),
      String(seed),
    ],
    { maxBuffer: 16 * 1024 * 1024, timeout: 30 * 60_000 },
  );
  const line = stdout.trim().split("\n").pop() ?? "";
  return JSON.parse(line) as OverheadResult;
}
