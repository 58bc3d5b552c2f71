import { freePorts } from "../../devkit/freePorts";
import { awaitReady, entryBeside, forkInstance } from "../../devkit/instanceProcess";
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

export async function startHost(port: number, opts: StartHostsOptions): Promise<HostHandle> {
  const out = opts.out ?? ((line: string) => console.log(line));
  // The built host entry, or the source one under tsx (benchmarks and tests run from source).
  const instance = forkInstance<HostRequest, HostReply>({
    entry: entryBeside(__dirname, "hostProcess", __filename.endsWith(".ts")),
    prefix: `[${port}] `,
    out,
  });
  const ready = awaitReady<HostRequest, HostReply, Extract<HostReply, { kind: "ready" }>>(
    instance,
    `host on port ${port}`,
    opts.readyTimeoutMs ?? 60_000,
    (m) => (m.kind === "ready" ? { ready: m } : m.kind === "failed" ? { failed: m.error } : undefined),
  );
  instance.send({ kind: "start", options: { ...opts.runtime, port } });
  const info = await ready;
  const { exited } = instance;
  return {
    port: info.port,
    url: info.url,
    functions: info.functions.map((f) => ({
      ...f,
      ...(f.nextOccurrence ? { nextOccurrence: new Date(f.nextOccurrence) } : {}),
    })),
    pid: instance.pid,
    exited,
    kill: () => instance.kill(),
    async stop(timeoutMs = 60_000) {
      if (instance.gone()) return;
      if (instance.child.connected) instance.send({ kind: "stop" });
      else instance.child.kill("SIGTERM");
      const timer = setTimeout(() => instance.kill(), timeoutMs);
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
