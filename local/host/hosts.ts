import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { freePorts } from "../../devkit/freePorts";
import type { HostReply, HostRequest } from "./hostProcess";
import type { LocalRuntimeOptions, RuntimeFunction } from "./runtime";

/**
 * N Functions hosts as N processes over the same storage and ARM, ports `firstPort`, `firstPort + 1`, ... (or free
 * ports for 0), each line of each host's output prefixed with `[port]`.
 */

export interface HostHandle {
  port: number;
  url: string;
  functions: RuntimeFunction[];
  pid: number;
  exited: Promise<number | null>;
  /** The process dies at once (SIGKILL), as a host does when its instance is reclaimed: nothing is drained. */
  kill(): void;
  /** Drains the host's in-flight invocations and waits for it to exit. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface StartHostsOptions {
  count: number;
  /** 0: free ports. */
  firstPort: number;
  runtime: Omit<LocalRuntimeOptions, "log" | "print" | "port">;
  /** Where each prefixed output line goes; default console.log. */
  out?: (line: string) => void;
  readyTimeoutMs?: number;
}

function prefixLines(stream: NodeJS.ReadableStream | null, prefix: string, out: (line: string) => void): void {
  let rest = "";
  stream?.on("data", (d: Buffer) => {
    const parts = (rest + d.toString("utf8")).split("\n");
    rest = parts.pop() ?? "";
    for (const p of parts) out(`${prefix}${p}`);
  });
  stream?.on("end", () => rest && out(`${prefix}${rest}`));
}

/** The built host entry, or the source one under tsx (benchmarks and tests run from source). */
function hostEntry(): { file: string; execArgv: string[] } {
  const fromSource = __filename.endsWith(".ts");
  return {
    file: join(__dirname, fromSource ? "hostProcess.ts" : "hostProcess.js"),
    execArgv: fromSource ? ["--import", "tsx"] : [],
  };
}

export async function startHost(port: number, opts: StartHostsOptions): Promise<HostHandle> {
  const out = opts.out ?? ((line: string) => console.log(line));
  const entry = hostEntry();
  const child: ChildProcess = fork(entry.file, [], {
    execArgv: entry.execArgv,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    env: process.env,
  });
  prefixLines(child.stdout, `[${port}] `, out);
  prefixLines(child.stderr, `[${port}] `, out);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<{ url: string; port: number; functions: RuntimeFunction[] }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`host on port ${port} not ready after ${opts.readyTimeoutMs ?? 60_000} ms`)),
      opts.readyTimeoutMs ?? 60_000,
    );
    child.on("message", (m: HostReply) => {
      if (m.kind === "ready") {
        clearTimeout(timer);
        resolve(m);
      } else if (m.kind === "failed") {
        clearTimeout(timer);
        reject(new Error(`host on port ${port} failed to start: ${m.error}`));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`host on port ${port} exited with ${code} before it was ready`));
    });
  });
  const request: HostRequest = { kind: "start", options: { ...opts.runtime, port } };
  child.send(request);
  let info: { url: string; port: number; functions: RuntimeFunction[] };
  try {
    info = await ready;
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  let gone = false;
  void exited.then(() => (gone = true));
  return {
    port: info.port,
    url: info.url,
    functions: info.functions.map((f) => ({
      ...f,
      ...(f.nextOccurrence ? { nextOccurrence: new Date(f.nextOccurrence) } : {}),
    })),
    pid: child.pid ?? -1,
    exited,
    kill: () => {
      if (!gone) child.kill("SIGKILL");
    },
    async stop(timeoutMs = 60_000) {
      if (gone) return;
      if (child.connected) child.send({ kind: "stop" } satisfies HostRequest);
      else child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function startHosts(opts: StartHostsOptions): Promise<HostHandle[]> {
  const ports =
    opts.firstPort === 0
      ? await freePorts(opts.count)
      : Array.from({ length: opts.count }, (_, i) => opts.firstPort + i);
  const started = await Promise.allSettled(ports.map((p) => startHost(p, opts)));
  const hosts = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) {
    await Promise.all(hosts.map((h) => h.stop()));
    throw failed.reason;
  }
  return hosts;
}
