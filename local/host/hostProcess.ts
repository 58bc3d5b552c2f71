import { startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions, type RuntimeFunction } from "./runtime";

/**
 * One Functions host of `npm run local -- --hosts N`, in a process of its own as on a scaled-out Function App
 * (each with its own memory: its own coalescer, pacers and gather windows). The parent sends the runtime options
 * over IPC, gets back the host's URL and functions, and later asks it to stop; a host whose parent is gone stops too.
 * Ctrl-C reaches every process of the terminal's group: the host leaves stopping to the parent, which drains each.
 */

export type HostRequest = { kind: "start"; options: Omit<LocalRuntimeOptions, "log" | "print"> } | { kind: "stop" };
export type HostReply =
  | { kind: "ready"; url: string; port: number; functions: RuntimeFunction[] }
  | { kind: "failed"; error: string }
  | { kind: "stopped" };

let runtime: LocalRuntime | undefined;
let stopping: Promise<void> | undefined;

const send = (m: HostReply) => process.send?.(m);

function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    await runtime?.stop().catch((err: unknown) => console.error(`stopping: ${(err as Error)?.stack ?? String(err)}`));
    send({ kind: "stopped" });
    process.disconnect?.();
    process.exit(code);
  })();
  return stopping;
}

if (require.main === module) {
  process.on("SIGINT", () => undefined);
  process.on("disconnect", () => void stop(0));
  process.on("message", (m: HostRequest) => {
    if (m.kind === "stop") void stop(0);
    else if (m.kind === "start" && !runtime) {
      startLocalRuntime({ ...m.options, print: (line) => console.log(line) }).then(
        (rt) => {
          runtime = rt;
          send({ kind: "ready", url: rt.url, port: rt.port, functions: rt.functions });
        },
        (err: unknown) => {
          send({ kind: "failed", error: (err as Error)?.stack ?? String(err) });
          process.exit(1);
        },
      );
    }
  });
}
