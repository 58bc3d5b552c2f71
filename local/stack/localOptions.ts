import { randomBytes } from "node:crypto";
import { isAbsolute, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_AZURITE_PORTS, type AzuritePorts } from "../../devkit/azurite";
import type { LoadedSettings } from "../host/settings";

/**
 * What `npm run local` runs, from its flags, the environment and the settings file: which ports, whether to start
 * the simulator (an ARM_ENDPOINT on this machine) or to talk to real ARM, whether Azurite is needed
 * (`UseDevelopmentStorage=true`), and the app settings the runtime is given. Pure: the tests call it directly.
 */

export const DEMO_SCOPE = "/subscriptions/11111111-2222-3333-4444-555555555555";
export const DEFAULT_RUNTIME_PORT = 7071;
export const DEFAULT_SIM_PORT = 18443;
export const DEFAULT_EVENT_DELAY_MS = 1000;
/** The simulator's test-only certificate, relative to the app directory. */
export const SIM_CA_FILE = join("sim", "tls", "cert.pem");

export const USAGE = `usage: npm run local -- [options]        (or: node dist/local/stack/main.js [options])
  --port N             the Functions runtime (HTTP, Event Grid webhook)   POOLSYNC_LOCAL_PORT        default 7071
  --sim-port N         the ARM simulator (https)                         POOLSYNC_LOCAL_SIM_PORT    default 18443
  --blob-port N        Azurite blob                                      POOLSYNC_LOCAL_BLOB_PORT   default 10000
  --queue-port N       Azurite queue                                     POOLSYNC_LOCAL_QUEUE_PORT  default 10001
  --table-port N       Azurite table                                     POOLSYNC_LOCAL_TABLE_PORT  default 10002
  --data DIR           keep Azurite's data in DIR (default: in memory)   POOLSYNC_LOCAL_AZURITE_DATA
  --event-delay-ms N   delay of the simulator's ARM events to the webhook  POOLSYNC_LOCAL_EVENT_DELAY_MS default 1000
  --no-events          deliver no ARM events (as in Azure without a subscription: the timer covers)  POOLSYNC_LOCAL_EVENTS=false
  --event-grid-seed N  deliver events as Event Grid does (at least once, out of order, some twice, some hours late
                       on its retry schedule), planned by this seed          POOLSYNC_LOCAL_EVENT_GRID_SEED
  --host H             the runtime's listen address                       default 127.0.0.1
  --allow-remote       let --host be beyond loopback (needs POOLSYNC_LOCAL_FUNCTION_KEY)
  --hosts N            N Functions hosts (processes) on ports --port, --port+1, ...  POOLSYNC_LOCAL_HOSTS  default 1
  --throttling         the simulator enforces CRP's and ARM's buckets (429s)          POOLSYNC_LOCAL_THROTTLING=true
  -h, --help
Settings: local.settings.json when present, else local.settings.example.json; environment variables win.
ARM_ENDPOINT on this machine (the default https://127.0.0.1:18443) starts the simulator (--seed demo);
anything else (https://management.azure.com) is used as is, with POOLSYNC_SCOPES required.`;

export class UsageError extends Error {
  override name = "UsageError";
}

export interface LocalOptions {
  appDir: string;
  host: string;
  /** --allow-remote: the runtime may listen beyond loopback (it then needs POOLSYNC_LOCAL_FUNCTION_KEY). */
  allowRemote?: boolean;
  runtimePort: number;
  /** The simulator to start, or undefined when ARM_ENDPOINT is elsewhere (real Azure). */
  simulator: { port: number } | undefined;
  /** Azurite to reuse or start, or undefined when AzureWebJobsStorage is a real connection string. */
  azurite: { ports: AzuritePorts; dataDir: string | undefined } | undefined;
  /** ARM events from the simulator to the webhook: delay (and, seeded, Event Grid's own delivery), or undefined for
   *  none. */
  events: { delayMs: number; eventGridSeed?: number } | undefined;
  /** App settings for the runtime (file values, environment overrides, local-mode defaults). */
  settings: Record<string, string>;
  settingsSource: string | undefined;
  /** Functions hosts to run, each its own process (1: in this process). */
  hosts: number;
  /** The simulator enforces its throttling buckets. */
  throttling: boolean;
  help: boolean;
}

/** Settings the simulator needs that would be wrong against real ARM (a fixed token, the test CA). */
const SIMULATOR_ONLY = ["POOLSYNC_ARM_CREDENTIAL", "POOLSYNC_ARM_STATIC_TOKEN", "POOLSYNC_ARM_CA_FILE"];
/** Settings read here whose environment value wins even when the settings file does not name them. */
const LOCAL_SETTINGS = [
  "ARM_ENDPOINT",
  "AzureWebJobsStorage",
  "POOLSYNC_SCOPES",
  "POOLSYNC_ARM_CA_FILE",
  "POOLSYNC_ARM_CREDENTIAL",
  "POOLSYNC_LOCAL_PORT",
  "POOLSYNC_LOCAL_SIM_PORT",
  "POOLSYNC_LOCAL_BLOB_PORT",
  "POOLSYNC_LOCAL_QUEUE_PORT",
  "POOLSYNC_LOCAL_TABLE_PORT",
  "POOLSYNC_LOCAL_AZURITE_DATA",
  "POOLSYNC_LOCAL_EVENT_DELAY_MS",
  "POOLSYNC_LOCAL_EVENT_GRID_SEED",
  "POOLSYNC_LOCAL_EVENTS",
  "POOLSYNC_LOCAL_HOSTS",
  "POOLSYNC_LOCAL_TEST_PRINCIPALS",
  "POOLSYNC_LOCAL_WEBHOOK_KEY",
  "POOLSYNC_LOCAL_FUNCTION_KEY",
  "POOLSYNC_LOCAL_THROTTLING",
];

function port(what: string, raw: string | undefined, allowZero = true): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1) || n > 65535)
    throw new UsageError(`${what} must be a port number (0-65535, 0 = any free port), got ${JSON.stringify(raw)}`);
  return n;
}

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\./.test(h);
}

function isFalse(v: string | undefined): boolean {
  return v !== undefined && ["false", "0", "no", "off"].includes(v.trim().toLowerCase());
}

interface Flags {
  [flag: string]: string | true | undefined;
}

const OPTIONS = {
  port: { type: "string" },
  "sim-port": { type: "string" },
  "blob-port": { type: "string" },
  "queue-port": { type: "string" },
  "table-port": { type: "string" },
  data: { type: "string" },
  "event-delay-ms": { type: "string" },
  "event-grid-seed": { type: "string" },
  host: { type: "string" },
  "allow-remote": { type: "boolean" },
  hosts: { type: "string" },
  "no-events": { type: "boolean" },
  throttling: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * The flags by their names ("--port"); an unknown flag, a missing or empty value, or a stray argument is a usage error.
 */
function parseFlags(argv: readonly string[]): Flags {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const flags: Flags = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === "") throw new UsageError(`--${name} needs a value\n${USAGE}`);
    if (value !== undefined && value !== false) flags[`--${name}`] = value;
  }
  return flags;
}

export function resolveLocalOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  file: LoadedSettings,
  appDir: string,
): LocalOptions {
  const flags = parseFlags(argv);
  const flag = (name: string): string | undefined => {
    const v = flags[name];
    return typeof v === "string" ? v : undefined;
  };
  const fromExample = file.source !== undefined && /local\.settings\.example\.json$/.test(file.source);

  // The file's values, then the environment's for every name the file has and every name read here: as under
  // `func start`, a variable already set in the environment is not overridden by local.settings.json.
  const settings: Record<string, string> = { ...file.values };
  for (const name of new Set([...Object.keys(settings), ...LOCAL_SETTINGS])) {
    const v = env[name];
    if (v !== undefined) settings[name] = v;
  }
  const setInEnv = (name: string) => env[name] !== undefined;

  const runtimePort =
    port("--port / POOLSYNC_LOCAL_PORT", flag("--port") ?? settings.POOLSYNC_LOCAL_PORT) ?? DEFAULT_RUNTIME_PORT;

  // ARM: the simulator when ARM_ENDPOINT is on this machine (or unset), real ARM otherwise.
  const endpoint = settings.ARM_ENDPOINT?.trim() || `https://127.0.0.1:${DEFAULT_SIM_PORT}`;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new UsageError(`ARM_ENDPOINT=${JSON.stringify(endpoint)} is not a URL`);
  }
  let simulator: LocalOptions["simulator"];
  if (isLoopback(url.hostname)) {
    const simPort =
      port("--sim-port / POOLSYNC_LOCAL_SIM_PORT", flag("--sim-port") ?? settings.POOLSYNC_LOCAL_SIM_PORT) ??
      (url.port ? Number(url.port) : DEFAULT_SIM_PORT);
    simulator = { port: simPort };
    // The SDK sends bearer tokens over https only, so the simulator always serves https with its test certificate.
    settings.ARM_ENDPOINT = `https://127.0.0.1:${simPort}`;
    if (!settings.POOLSYNC_SCOPES?.trim()) settings.POOLSYNC_SCOPES = DEMO_SCOPE;
    // The simulator's made-up world: any pairing inside the scopes (against real ARM the user must write rules).
    if (!settings.POOLSYNC_BINDINGS?.trim()) settings.POOLSYNC_BINDINGS = "*";
    // One cache MAC key for every host of this run (each process would otherwise pick its own and share no rows).
    if (!settings.POOLSYNC_CACHE_KEY?.trim()) settings.POOLSYNC_CACHE_KEY = randomBytes(24).toString("base64");
    if (!settings.POOLSYNC_ARM_CREDENTIAL?.trim()) settings.POOLSYNC_ARM_CREDENTIAL = "static";
    const ca = settings.POOLSYNC_ARM_CA_FILE?.trim() || SIM_CA_FILE;
    settings.POOLSYNC_ARM_CA_FILE = isAbsolute(ca) ? ca : resolve(appDir, ca);
  } else {
    if (flag("--sim-port") !== undefined)
      throw new UsageError(`--sim-port: ARM_ENDPOINT is ${endpoint}, so no simulator is started`);
    if (fromExample) {
      // The example's simulator settings (static token, test CA) and demo scope must not reach real ARM.
      for (const name of SIMULATOR_ONLY) if (!setInEnv(name)) delete settings[name];
      if (!setInEnv("POOLSYNC_SCOPES")) delete settings.POOLSYNC_SCOPES;
    }
    if (!settings.POOLSYNC_SCOPES?.trim()) {
      throw new UsageError(
        `ARM_ENDPOINT is ${endpoint}, not the local simulator: set POOLSYNC_SCOPES (the subscriptions or resource groups poolsync may change)`,
      );
    }
    if (settings.POOLSYNC_ARM_CA_FILE?.trim() && !isAbsolute(settings.POOLSYNC_ARM_CA_FILE))
      settings.POOLSYNC_ARM_CA_FILE = resolve(appDir, settings.POOLSYNC_ARM_CA_FILE);
  }

  // Storage: Azurite for UseDevelopmentStorage=true (or nothing set); a real connection string is used as is.
  const storage = settings.AzureWebJobsStorage?.trim();
  let azurite: LocalOptions["azurite"];
  if (!storage || /^UseDevelopmentStorage\s*=\s*true\s*;?$/i.test(storage)) {
    settings.AzureWebJobsStorage = "UseDevelopmentStorage=true";
    const ports: AzuritePorts = {
      blob:
        port(
          "--blob-port / POOLSYNC_LOCAL_BLOB_PORT",
          flag("--blob-port") ?? settings.POOLSYNC_LOCAL_BLOB_PORT,
          false,
        ) ?? DEFAULT_AZURITE_PORTS.blob,
      queue:
        port(
          "--queue-port / POOLSYNC_LOCAL_QUEUE_PORT",
          flag("--queue-port") ?? settings.POOLSYNC_LOCAL_QUEUE_PORT,
          false,
        ) ?? DEFAULT_AZURITE_PORTS.queue,
      table:
        port(
          "--table-port / POOLSYNC_LOCAL_TABLE_PORT",
          flag("--table-port") ?? settings.POOLSYNC_LOCAL_TABLE_PORT,
          false,
        ) ?? DEFAULT_AZURITE_PORTS.table,
    };
    if (new Set([ports.blob, ports.queue, ports.table]).size !== 3)
      throw new UsageError(
        `Azurite's blob, queue and table ports must differ, got ${ports.blob}/${ports.queue}/${ports.table}`,
      );
    const data = flag("--data") ?? settings.POOLSYNC_LOCAL_AZURITE_DATA?.trim();
    azurite = { ports, dataDir: data ? resolve(data) : undefined };
  } else {
    for (const f of ["--blob-port", "--queue-port", "--table-port", "--data"]) {
      if (flag(f) !== undefined)
        throw new UsageError(`${f}: AzureWebJobsStorage is a connection string, so no Azurite is started`);
    }
  }

  // Events: only the simulator publishes any; no events reach a laptop from real Azure (the timer covers).
  let events: LocalOptions["events"];
  if (simulator && flags["--no-events"] !== true && !isFalse(settings.POOLSYNC_LOCAL_EVENTS)) {
    const raw = flag("--event-delay-ms") ?? settings.POOLSYNC_LOCAL_EVENT_DELAY_MS;
    const delayMs = raw === undefined || raw.trim() === "" ? DEFAULT_EVENT_DELAY_MS : Number(raw);
    if (!Number.isInteger(delayMs) || delayMs < 0 || delayMs > 600_000)
      throw new UsageError(
        `--event-delay-ms / POOLSYNC_LOCAL_EVENT_DELAY_MS must be whole milliseconds (0-600000), got ${JSON.stringify(raw)}`,
      );
    const rawSeed = flag("--event-grid-seed") ?? settings.POOLSYNC_LOCAL_EVENT_GRID_SEED;
    const seed = rawSeed === undefined || rawSeed.trim() === "" ? undefined : Number(rawSeed);
    if (seed !== undefined && !Number.isSafeInteger(seed))
      throw new UsageError(
        `--event-grid-seed / POOLSYNC_LOCAL_EVENT_GRID_SEED must be a whole number, got ${JSON.stringify(rawSeed)}`,
      );
    events = { delayMs, ...(seed !== undefined ? { eventGridSeed: seed } : {}) };
  } else if (flag("--event-grid-seed") !== undefined) {
    throw new UsageError("--event-grid-seed: no events are delivered (--no-events, or ARM is not the simulator)");
  }

  const rawHosts = flag("--hosts") ?? settings.POOLSYNC_LOCAL_HOSTS;
  const hosts = rawHosts === undefined || rawHosts.trim() === "" ? 1 : Number(rawHosts);
  if (!Number.isInteger(hosts) || hosts < 1 || hosts > 16)
    throw new UsageError(
      `--hosts / POOLSYNC_LOCAL_HOSTS must be a whole number of hosts (1-16), got ${JSON.stringify(rawHosts)}`,
    );
  const throttling =
    flags["--throttling"] === true ||
    (settings.POOLSYNC_LOCAL_THROTTLING !== undefined && !isFalse(settings.POOLSYNC_LOCAL_THROTTLING));
  if (throttling && !simulator)
    throw new UsageError(`--throttling: ARM_ENDPOINT is ${endpoint}, so no simulator is started`);

  return {
    appDir,
    host: flag("--host") ?? "127.0.0.1",
    allowRemote: flags["--allow-remote"] === true,
    hosts,
    throttling,
    runtimePort,
    simulator,
    azurite,
    events,
    settings,
    settingsSource: file.source,
    help: flags["--help"] === true,
  };
}
