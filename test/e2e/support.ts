import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { QueueClient } from "@azure/storage-queue";
import { TableClient } from "@azure/data-tables";
import { azuriteConnectionString, isPortOpen, type AzuritePorts } from "../../devkit/azurite";
import { DEMO_SUBSCRIPTION, type JsonObject } from "../../sim";
import { freePorts } from "../../devkit/freePorts";
import { testStorageConnectionString } from "../../devkit/storage";

/** The repo root (tests run the built app from here, as `npm run local` does). */
export const APP_DIR = join(__dirname, "..", "..");
const SIM_CA = readFileSync(join(APP_DIR, "sim", "tls", "cert.pem"), "utf8");

const RG = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag`;
export const IDS = {
  scaleSet: `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`,
  pool: `${RG}/providers/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s`,
  loadBalancer: `${RG}/providers/Microsoft.Network/loadBalancers/etag-k8s`,
  subnet: `${RG}/providers/Microsoft.Network/virtualNetworks/etag-k8s-vnet/subnets/node-subnet`,
};

/** Polls `probe` until `ok`, at most `timeoutMs`; the error says what was awaited and what was last seen. */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(v)?.slice(0, 2000)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface LocalProcess {
  child: ChildProcess;
  /** Every stdout/stderr line so far. */
  lines: string[];
  /** The app's JSON log lines so far (the runtime prints them on stdout). */
  logs(): Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  /** SIGINT (Ctrl-C), then the exit code. */
  interrupt(timeoutMs?: number): Promise<number | null>;
}

/** Starts `node dist/local/stack/main.js args` with exactly `env` (plus PATH/HOME) and waits for its ready line. */
export async function startLocalProcess(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<LocalProcess> {
  const child = spawn(process.execPath, [join(APP_DIR, "dist", "local", "stack", "main.js"), ...args], {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let rest = "";
    stream?.on("data", (d: Buffer) => {
      const parts = (rest + d.toString("utf8")).split("\n");
      rest = parts.pop() ?? "";
      lines.push(...parts);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((c) => (exitCode = c ?? -1));
  const proc: LocalProcess = {
    child,
    lines,
    logs: () =>
      lines.flatMap((l) => {
        if (!l.startsWith("{")) return [];
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    exited,
    async interrupt(ms = 20_000) {
      if (exitCode === undefined) child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  try {
    await waitFor(
      "npm run local to be ready",
      () => exitCode !== undefined || lines.some((l) => l.startsWith("poolsync local is ready")),
      Boolean,
      timeoutMs,
    );
    if (exitCode !== undefined) throw new Error(`main.js exited with ${exitCode}`);
  } catch (err) {
    child.kill("SIGKILL");
    throw new Error(`${(err as Error).message}\n--- output ---\n${lines.join("\n")}`, { cause: err });
  }
  return proc;
}

/** The simulator's control API (`/_sim/`) and ARM surface over https, trusting its test certificate. */
export function simClient(baseUrl: string) {
  const call = (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> =>
    new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        new URL(path, baseUrl),
        {
          method,
          ca: SIM_CA,
          headers: {
            authorization: "Bearer e2e",
            ...(text ? { "content-type": "application/json", "content-length": Buffer.byteLength(text) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const raw = Buffer.concat(chunks).toString("utf8");
            resolve({ status: res.statusCode ?? 0, body: raw ? (JSON.parse(raw) as unknown) : undefined });
          });
        },
      );
      req.on("error", reject);
      req.end(text);
    });
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await call(method, path, body);
    if (r.status !== 200) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const q = (id: string) => `?id=${encodeURIComponent(id)}`;
  return {
    call,
    resource: async (id: string) => (await ok("GET", `/_sim/resource${q(id)}`)) as JsonObject,
    instances: async (id: string) => ((await ok("GET", `/_sim/instances${q(id)}`)) as { value: JsonObject[] }).value,
    poolMembers: async (id: string) => ((await ok("GET", `/_sim/pool-members${q(id)}`)) as { value: string[] }).value,
    events: async () =>
      (
        (await ok("GET", "/_sim/events")) as {
          value: Array<{ subject: string; data: { httpRequest: { clientRequestId: string } } }>;
        }
      ).value,
    stats: async (id?: string) => (await ok("GET", `/_sim/stats${id ? q(id) : ""}`)) as Record<string, number>,
    write: async (id: string, merge: JsonObject, clientRequestId: string) =>
      (await ok("POST", "/_sim/write", { id, merge, clientRequestId })) as JsonObject,
    /** The load balancer as ARM answers a GET of it (backendIPConfigurations derived from the scale sets). */
    loadBalancer: async (id: string) => {
      const r = await call("GET", `${id}?api-version=2024-05-01`);
      if (r.status !== 200) throw new Error(`GET ${id} → ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as JsonObject;
    },
  };
}

export function storage(ports: AzuritePorts) {
  const cs = azuriteConnectionString(ports);
  return {
    connectionString: cs,
    queue: (name: string) => new QueueClient(cs, name),
    table: (name: string) => TableClient.fromConnectionString(cs, name, { allowInsecureConnection: true }),
  };
}

/** Puts a message on a queue as any producer would: JSON, base64 (host.json's messageEncoding). */
export async function sendMessage(queue: QueueClient, message: unknown): Promise<void> {
  await queue.createIfNotExists();
  await queue.sendMessage(Buffer.from(JSON.stringify(message), "utf8").toString("base64"));
}

export async function allClosed(ports: number[]): Promise<boolean> {
  return (await Promise.all(ports.map((p) => isPortOpen(p)))).every((open) => !open);
}

/** Ports of the suite's Azurite, from the connection string globalSetup exported. */
export function suiteAzuritePorts(): AzuritePorts {
  const cs = process.env.POOLSYNC_TEST_STORAGE ?? "";
  const port = (name: string, def: number) =>
    Number(new RegExp(`${name}Endpoint=http://[^:]+:(\\d+)`).exec(cs)?.[1] ?? def);
  return { blob: port("Blob", 10000), queue: port("Queue", 10001), table: port("Table", 10002) };
}

/**
 * `npm run local` on free ports over the suite's Azurite, with a queue and tables of its own (named from `tag`) and
 * operations polled every 50 ms; `env` adds or overrides settings.
 */
export async function startLocalOnOwnStorage(
  tag: string,
  env: Record<string, string> = {},
): Promise<{ local: LocalProcess; url: string; sim: ReturnType<typeof simClient>; queueName: string }> {
  const [port, simPort] = (await freePorts(2)) as [number, number];
  const local = await startLocalProcess(["--port", String(port), "--sim-port", String(simPort)], {
    AzureWebJobsStorage: testStorageConnectionString(),
    POOLSYNC_QUEUE: `${tag}q`,
    POOLSYNC_MEMBERSHIPS_TABLE: `${tag}m`,
    POOLSYNC_CACHE_TABLE: `${tag}c`,
    POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
    ...env,
  });
  return {
    local,
    url: `http://127.0.0.1:${port}`,
    sim: simClient(`https://127.0.0.1:${simPort}`),
    queueName: `${tag}q`,
  };
}
