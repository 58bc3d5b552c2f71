import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";

/** Azurite's well-known development account; not a secret (it is printed in Azurite's own docs). */
export const DEV_ACCOUNT = "devstoreaccount1";
export const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface AzuritePorts {
  blob: number;
  queue: number;
  table: number;
}

export const DEFAULT_AZURITE_PORTS: AzuritePorts = { blob: 10000, queue: 10001, table: 10002 };

export function azuriteConnectionString(ports: AzuritePorts, host = "127.0.0.1"): string {
  return (
    [
      "DefaultEndpointsProtocol=http",
      `AccountName=${DEV_ACCOUNT}`,
      `AccountKey=${DEV_KEY}`,
      `BlobEndpoint=http://${host}:${ports.blob}/${DEV_ACCOUNT}`,
      `QueueEndpoint=http://${host}:${ports.queue}/${DEV_ACCOUNT}`,
      `TableEndpoint=http://${host}:${ports.table}/${DEV_ACCOUNT}`,
    ].join(";") + ";"
  );
}

export function isPortOpen(port: number, host = "127.0.0.1", timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export interface RunningAzurite {
  ports: AzuritePorts;
  connectionString: string;
  /** Whether this process started it (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

/**
 * Reuses an Azurite already listening on the ports (CI starts one), or starts one from node_modules,
 * in memory, on loopback.
 */
export async function ensureAzurite(
  ports: AzuritePorts = DEFAULT_AZURITE_PORTS,
  opts: {
    dataDir?: string;
    /** Start it in its own process group, so a terminal's Ctrl-C reaches only us and we stop it after draining
     *  (killed when this process exits, whichever way short of SIGKILL). */
    ownProcessGroup?: boolean;
  } = {},
): Promise<RunningAzurite> {
  const connectionString = azuriteConnectionString(ports);
  const probe = (timeoutMs?: number) => azuritePortsOpen(ports, timeoutMs);
  let open = await probe();
  // A busy Azurite (a full accept backlog on a loaded machine) can miss a 500 ms connect on one port: look again,
  // more patiently, before calling the ports "partly taken".
  for (let retry = 0; retry < 3 && open.some(Boolean) && !open.every(Boolean); retry++) open = await probe(2000);
  if (open.every(Boolean)) {
    return { ports, connectionString, owned: false, stop: async () => {} };
  }
  if (open.some(Boolean)) {
    throw new Error(
      `Azurite ports ${ports.blob}/${ports.queue}/${ports.table} are partly taken by something else; free them or choose others`,
    );
  }
  const started = startAzurite(ports, opts);
  await started.ready;
  return started;
}

export interface StartingAzurite extends RunningAzurite {
  /** Settles when all three ports accept connections; rejects if Azurite exits first or is not up within 30 s. */
  ready: Promise<void>;
}

/**
 * Starts an Azurite from node_modules, in memory (or in `dataDir`), on loopback, without waiting for it: a caller with
 * other things to start meanwhile awaits `ready` later (Azurite takes about 2.5 s to listen, most of it loading its
 * modules). The ports must be free.
 */
export function startAzurite(
  ports: AzuritePorts,
  opts: { dataDir?: string; ownProcessGroup?: boolean } = {},
): StartingAzurite {
  const bin = require.resolve("azurite/dist/src/azurite.js");
  const args = [
    bin,
    "--disableTelemetry",
    "--silent",
    "--skipApiVersionCheck",
    "--blobHost",
    "127.0.0.1",
    "--blobPort",
    String(ports.blob),
    "--queueHost",
    "127.0.0.1",
    "--queuePort",
    String(ports.queue),
    "--tableHost",
    "127.0.0.1",
    "--tablePort",
    String(ports.table),
    ...(opts.dataDir ? ["--location", opts.dataDir] : ["--inMemoryPersistence"]),
  ];
  const child: ChildProcess = spawn(process.execPath, args, {
    stdio: ["ignore", "ignore", "pipe"],
    detached: opts.ownProcessGroup === true,
  });
  const killOnExit = () => child.kill("SIGTERM");
  if (opts.ownProcessGroup) {
    process.once("exit", killOnExit);
    child.once("exit", () => process.off("exit", killOnExit));
  }
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  const ready = (async () => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`Azurite exited with ${child.exitCode ?? child.signalCode}: ${stderr}`);
      if ((await azuritePortsOpen(ports)).every(Boolean)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGKILL");
    throw new Error(`Azurite did not listen on ${ports.blob}/${ports.queue}/${ports.table} within 30 s: ${stderr}`);
  })();
  // A caller that never awaits `ready` (it stops Azurite first) must not see an unhandled rejection.
  ready.catch(() => {});
  return { ports, connectionString: azuriteConnectionString(ports), owned: true, stop, ready };
}

/** Whether each of the blob, queue and table ports accepts a connection, in that order. */
export function azuritePortsOpen(ports: AzuritePorts, timeoutMs?: number): Promise<boolean[]> {
  return Promise.all([
    isPortOpen(ports.blob, undefined, timeoutMs),
    isPortOpen(ports.queue, undefined, timeoutMs),
    isPortOpen(ports.table, undefined, timeoutMs),
  ]);
}
