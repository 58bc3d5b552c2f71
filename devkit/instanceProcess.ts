import { fork, type ChildProcess } from "node:child_process";

/**
 * One app instance as an OS process of its own, the way Flex Consumption runs each instance: its own event loop and
 * memory, so nothing one instance does can help or slow another but the machine they share. `npm run local --hosts N`
 * (local/host/hosts.ts) and the benchmark's hosts section (bench/hostProcesses.ts) start theirs through this: a fork
 * of an entry file (the source one under tsx when the caller runs from source), its output prefixed line by line,
 * messages both ways over IPC, and SIGKILL for an instance the platform takes away mid-invocation.
 */

export interface InstanceProcess<In, Out> {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** True once the process has exited. */
  readonly gone: () => boolean;
  send(message: In): void;
  onMessage(listener: (message: Out) => void): void;
  /** Dies at once, as an instance the platform reclaims does: nothing is drained, nothing is told. */
  kill(): void;
}

/**
 * The entry file beside `dir` named `base`: the `.ts` one under tsx when this code runs from source (benchmarks and
 * tests), else the built `.js` one.
 */
export function entryBeside(dir: string, base: string, fromSource: boolean): { file: string; execArgv: string[] } {
  return {
    file: `${dir}/${base}${fromSource ? ".ts" : ".js"}`,
    execArgv: fromSource ? ["--import", "tsx"] : [],
  };
}

/** Each whole line of `stream` to `out`, with `prefix` before it. */
export function prefixLines(stream: NodeJS.ReadableStream | null, prefix: string, out: (line: string) => void): void {
  let rest = "";
  stream?.on("data", (d: Buffer) => {
    const parts = (rest + d.toString("utf8")).split("\n");
    rest = parts.pop() ?? "";
    for (const p of parts) out(`${prefix}${p}`);
  });
  stream?.on("end", () => rest && out(`${prefix}${rest}`));
}

export interface ForkInstanceOptions {
  entry: { file: string; execArgv: string[] };
  /** Before each line of the instance's stdout and stderr. */
  prefix: string;
  out: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

export function forkInstance<In, Out>(opts: ForkInstanceOptions): InstanceProcess<In, Out> {
  const child = fork(opts.entry.file, [], {
    execArgv: opts.entry.execArgv,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    env: opts.env ?? process.env,
  });
  prefixLines(child.stdout, opts.prefix, opts.out);
  prefixLines(child.stderr, opts.prefix, opts.out);
  let gone = false;
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      gone = true;
      resolve(code);
    }),
  );
  return {
    child,
    pid: child.pid ?? -1,
    exited,
    gone: () => gone,
    send: (m) => {
      if (child.connected) child.send(m as object);
    },
    onMessage: (listener) => child.on("message", (m) => listener(m as Out)),
    kill: () => {
      if (!gone) child.kill("SIGKILL");
    },
  };
}

/**
 * Waits for the instance's first message that `pick` accepts (its "ready"); rejects on `failed`, on exit first, or
 * after `timeoutMs` (the instance is then killed).
 */
export function awaitReady<In, Out, R>(
  p: InstanceProcess<In, Out>,
  what: string,
  timeoutMs: number,
  pick: (m: Out) => { ready: R } | { failed: string } | undefined,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    let settled = false;
    const end = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
    };
    const timer = setTimeout(
      () =>
        end(() => {
          p.kill();
          reject(new Error(`${what} not ready after ${timeoutMs} ms`));
        }),
      timeoutMs,
    );
    p.onMessage((m) => {
      const r = pick(m);
      if (r && "ready" in r) end(() => resolve(r.ready));
      else if (r && "failed" in r)
        end(() => {
          p.kill();
          reject(new Error(`${what} failed to start: ${r.failed}`));
        });
    });
    void p.exited.then((code) => end(() => reject(new Error(`${what} exited with ${code} before it was ready`))));
  });
}
