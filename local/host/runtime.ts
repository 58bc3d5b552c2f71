import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { QueueServiceClient } from "@azure/storage-queue";
import { appHookData, registeredHooks } from "./coreStandIn";
import type { EventGridTarget } from "./eventGridWebhook";
import { EVENT_GRID_WEBHOOK_PATH } from "./eventGridWebhook";
import { loadHostConfig, type QueueHostOptions } from "./hostConfig";
import { byPrecedence, httpTarget, type HttpTarget } from "./httpTrigger";
import { InFlight } from "./inflight";
import { listenerLockBlob, SingletonListener, type Startable } from "./listenerLock";
import type { InvocationLogger } from "./invoke";
import {
  consoleInvocationLogger,
  loadRegisteredFunctions,
  type RegisteredFunction,
  type TriggerBinding,
} from "./loadFunctions";
import { defaultUseMonitor, parseSchedule } from "./ncrontab";
import { QueueListener } from "./queueTrigger";
import { MemoryScheduleMonitor, TableScheduleMonitor, type ScheduleMonitor } from "./scheduleMonitor";
import { startRuntimeServer, type RuntimeServer } from "./server";
import { loadLocalSettings, resolvePlaceholders } from "./settings";
import { resolveStorageConnection } from "./storageConnection";
import { TimerListener } from "./timerTrigger";
import { isLoopbackName } from "./requestGuard";
import { randomBytes } from "node:crypto";

export interface LocalRuntimeOptions {
  /** Built entry points; default: package.json's `main` in appDir. */
  entryGlob?: string;
  /** Where host.json, package.json and local.settings*.json live; default: the working directory. */
  appDir?: string;
  /** App settings; applied to process.env before the app loads. Default: local.settings.json, else the example. */
  settings?: Record<string, string>;
  /** 7071 as under `func start`; 0 picks a free port. */
  port?: number;
  host?: string;
  /**
   * Listen beyond loopback (`host` 0.0.0.0 or a LAN address): refused unless set (`npm run local -- --allow-remote`).
   */
  allowRemote?: boolean;
  /**
   * Honour `x-test-client-principal` (tests, demos): default the setting POOLSYNC_LOCAL_TEST_PRINCIPALS=true, else
   * off, and the header is dropped like any client-sent principal.
   */
  testPrincipals?: boolean;
  /** The Event Grid webhook's key; default the setting POOLSYNC_LOCAL_WEBHOOK_KEY, else a random one per start. */
  webhookKey?: string;
  /** What `UseDevelopmentStorage=true` (and a missing AzureWebJobsStorage) means; default: Azurite's standard ports. */
  storageConnectionString?: string;
  /** Overrides host.json's `extensions.queues` (tests use short intervals). */
  queues?: Partial<QueueHostOptions>;
  /** Where timers keep their schedule status: a table in AzureWebJobsStorage (default), memory, or your own. */
  timerStatus?: "storage" | "memory" | ScheduleMonitor;
  timerStatusTable?: string;
  /**
   * With storage-kept timer status (the default), each timer runs only on the host holding its listener lock (a blob
   * lease under azure-webjobs-hosts), as on a scaled-out Function App. hostId names the app's locks (default: the
   * status table's name); the lease and the interval at which the other hosts try to take it are the host's own.
   */
  timerLock?: { hostId?: string; leaseSeconds?: number; recoveryPollMs?: number };
  log?: InvocationLogger;
  /** Startup lines (the function list); default console.log; false for silence. */
  print?: ((line: string) => void) | false;
}

export interface RuntimeFunction {
  name: string;
  triggerType: string;
  trigger: TriggerBinding;
  disabled: boolean;
  /** queueTrigger: the resolved queue name. */
  queueName?: string;
  /** timerTrigger: the resolved schedule and its next occurrence at start. */
  schedule?: string;
  nextOccurrence?: Date;
  /** httpTrigger and eventGridTrigger: where to send requests. */
  url?: string;
  methods?: string[];
  /** Why it will not run here, when it will not (unsupported trigger type). */
  notRunning?: string;
}

export interface LocalRuntime {
  url: string;
  port: number;
  functions: RuntimeFunction[];
  /** What the app registered, with metadata as the host reads it and `invoke` through the library. */
  registered: RegisteredFunction[];
  /** Stops taking work (polls, timers, new connections), drains in-flight invocations, then runs appTerminate hooks. */
  stop(): Promise<void>;
}

const DEFAULT_TIMER_TABLE = "localruntimetimers";

function packageMain(appDir: string): string {
  const pkg = JSON.parse(readFileSync(join(appDir, "package.json"), "utf8")) as { main?: unknown };
  if (typeof pkg.main !== "string" || !pkg.main)
    throw new Error(`${join(appDir, "package.json")} has no "main" glob of entry points`);
  return pkg.main;
}

/**
 * The runtime's own safety (issue 26), checked before anything starts: loopback unless allowRemote; the test principal
 * only in test mode; a webhook key; and against an ARM that is not on this machine, real callers' authentication:
 * POOLSYNC_AUTH=key with POOLSYNC_LOCAL_FUNCTION_KEY (32+ characters, checked on every function-level route) and no
 * test principals, since the developer's own credentials would otherwise write for anyone who reaches the port.
 */
function localGuard(opts: LocalRuntimeOptions, settings: Record<string, string>) {
  const listenHost = opts.host ?? "127.0.0.1";
  const allowRemote = opts.allowRemote ?? false;
  if (!isLoopbackName(listenHost) && !allowRemote)
    throw new Error(
      `the local runtime listens on loopback only: host ${JSON.stringify(listenHost)} needs --allow-remote (allowRemote)`,
    );
  const testPrincipals = opts.testPrincipals ?? isTruthySetting(settings.POOLSYNC_LOCAL_TEST_PRINCIPALS);
  const webhookKey = opts.webhookKey ?? settings.POOLSYNC_LOCAL_WEBHOOK_KEY ?? randomBytes(24).toString("base64url");
  const functionKey = settings.POOLSYNC_LOCAL_FUNCTION_KEY?.trim() || undefined;
  if (functionKey !== undefined && functionKey.length < 32)
    throw new Error("POOLSYNC_LOCAL_FUNCTION_KEY must be at least 32 characters (random)");
  // poolsync (its POOLSYNC_SCOPES set) without ARM_ENDPOINT talks to Azure's; another app (a test fixture) to none.
  const arm = settings.ARM_ENDPOINT ?? (settings.POOLSYNC_SCOPES ? "https://management.azure.com" : undefined);
  let armHost = "127.0.0.1";
  try {
    if (arm !== undefined) armHost = new URL(arm).hostname;
  } catch {
    throw new Error(`ARM_ENDPOINT ${JSON.stringify(arm)} is not a URL`);
  }
  if (!isLoopbackName(armHost)) {
    const missing = [
      (settings.POOLSYNC_AUTH ?? "").trim().toLowerCase() !== "key" ? "POOLSYNC_AUTH=key" : "",
      functionKey === undefined ? "POOLSYNC_LOCAL_FUNCTION_KEY" : "",
      testPrincipals ? "test principals off (POOLSYNC_LOCAL_TEST_PRINCIPALS)" : "",
    ].filter(Boolean);
    if (missing.length > 0)
      throw new Error(
        `ARM_ENDPOINT ${arm ?? ""} is not on this machine: the local runtime refuses to start without real authentication of its callers (${missing.join(", ")})`,
      );
  }
  if (allowRemote && functionKey === undefined)
    throw new Error(
      "--allow-remote (allowRemote) needs POOLSYNC_LOCAL_FUNCTION_KEY: callers beyond this machine must hold a key",
    );
  return { allowRemote, testPrincipals, webhookKey, ...(functionKey ? { functionKey } : {}) };
}

/** A webhook URL as printed: its key left out (the URL in `functions` carries it, for whoever delivers events). */
export function withoutKey(url: string): string {
  return url.replace(/&code=[^&]*/, "");
}

function isTruthySetting(v: string | undefined): boolean {
  return !!v && ["true", "1"].includes(v.trim().toLowerCase());
}

/**
 * Runs the app the way `func start` does: settings into the environment, entry points loaded through the
 * `@azure/functions-core` stand-in, appStart hooks, then the listeners: Storage Queue pollers, timers, the Event
 * Grid webhook and the HTTP routes on one port.
 */
export async function startLocalRuntime(opts: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const appDir = resolve(opts.appDir ?? process.cwd());
  const settings = { ...(opts.settings ?? loadLocalSettings(appDir).values) };
  const devStorage = opts.storageConnectionString;
  if (
    devStorage &&
    (!settings.AzureWebJobsStorage || /UseDevelopmentStorage\s*=\s*true/i.test(settings.AzureWebJobsStorage))
  ) {
    settings.AzureWebJobsStorage = devStorage;
  }
  // This runtime strips client-sent principal headers itself, as App Service authentication does (server.ts).
  settings.POOLSYNC_PRINCIPAL_STRIPPED_BY ??= "the poolsync local runtime";
  const guard = localGuard(opts, settings);
  Object.assign(process.env, settings);
  const env = process.env as Record<string, string | undefined>;

  const hostConfig = loadHostConfig(appDir, env);
  const queueOptions: QueueHostOptions = { ...hostConfig.queues, ...opts.queues };
  const log = opts.log ?? consoleInvocationLogger;
  const print = opts.print === false ? () => undefined : (opts.print ?? ((line: string) => console.log(line)));
  const onError = (fn: string) => (err: unknown) => console.error(`[${fn}] ${(err as Error)?.stack ?? String(err)}`);

  const registered = loadRegisteredFunctions({
    entryGlob: opts.entryGlob ?? packageMain(appDir),
    appDir,
    log,
    functionTimeoutMs: hostConfig.functionTimeoutMs,
  });

  const inFlight = new InFlight();
  const queues: QueueListener[] = [];
  const timers: { fn: RuntimeFunction; latest: () => TimerListener | undefined; runner: Startable }[] = [];
  const http: HttpTarget[] = [];
  const eventGrid = new Map<string, EventGridTarget>();
  const functions: RuntimeFunction[] = [];
  let monitor: ScheduleMonitor | undefined;
  const timerMonitor = (): ScheduleMonitor => {
    if (monitor) return monitor;
    const choice = opts.timerStatus ?? "storage";
    if (choice === "memory") monitor = new MemoryScheduleMonitor();
    else if (choice === "storage")
      monitor = new TableScheduleMonitor(
        resolveStorageConnection(undefined, env, devStorage),
        opts.timerStatusTable ?? DEFAULT_TIMER_TABLE,
      );
    else monitor = choice;
    return monitor;
  };

  for (const fn of registered) {
    const t = fn.trigger;
    const info: RuntimeFunction = {
      name: fn.name,
      triggerType: t.type,
      trigger: t,
      disabled: isTruthySetting(env[`AzureWebJobs.${fn.name}.Disabled`]),
    };
    functions.push(info);
    const what = `Function "${fn.name}" (${t.type})`;
    switch (t.type.toLowerCase()) {
      case "queuetrigger": {
        // The extension lower-cases the resolved name before validating it.
        const queueName = resolvePlaceholders(String(t.queueName ?? ""), env, `${what} queueName`).toLowerCase();
        info.queueName = queueName;
        if (info.disabled) break;
        const service = QueueServiceClient.fromConnectionString(
          resolveStorageConnection(t.connection, env, devStorage),
        );
        queues.push(
          new QueueListener({
            functionName: fn.name,
            bindingName: t.name,
            queue: service.getQueueClient(queueName),
            poisonQueue: service.getQueueClient(`${queueName}-poison`),
            options: queueOptions,
            invoke: fn.invoke,
            inFlight,
            log: (m) =>
              log({ functionName: fn.name, invocationId: "", level: "warning", category: "system", message: m }),
            onError: onError(fn.name),
          }),
        );
        break;
      }
      case "timertrigger": {
        const expression = resolvePlaceholders(String(t.schedule ?? ""), env, `${what} schedule`);
        const schedule = parseSchedule(expression);
        info.schedule = expression;
        if (info.disabled) break;
        const useMonitor = typeof t.useMonitor === "boolean" ? t.useMonitor : defaultUseMonitor(schedule, new Date());
        let latest: TimerListener | undefined;
        // A fresh listener each time this host takes the lock (a stopped one stays stopped).
        const make = () =>
          (latest = new TimerListener({
            functionName: fn.name,
            bindingName: t.name,
            schedule,
            runOnStartup: t.runOnStartup === true,
            monitor: useMonitor ? timerMonitor() : undefined,
            invoke: fn.invoke,
            inFlight,
            onError: onError(fn.name),
          }));
        const locked = (opts.timerStatus ?? "storage") === "storage";
        const runner: Startable = locked
          ? new SingletonListener(
              listenerLockBlob(
                resolveStorageConnection(undefined, env, devStorage),
                opts.timerLock?.hostId ?? (opts.timerStatusTable ?? DEFAULT_TIMER_TABLE).toLowerCase(),
                fn.name,
              ),
              make,
              { ...opts.timerLock, onError: onError(fn.name) },
            )
          : make();
        timers.push({ fn: info, latest: () => latest, runner });
        break;
      }
      case "eventgridtrigger":
        if (!info.disabled) eventGrid.set(fn.name, { bindingName: t.name, invoke: fn.invoke });
        break;
      case "httptrigger": {
        const target = httpTarget(fn.name, t.name, t, hostConfig.httpRoutePrefix, fn.invoke);
        info.methods = target.methods;
        info.url = `/${target.route.template}`;
        if (!info.disabled) http.push(target);
        break;
      }
      default:
        info.notRunning = `the local runtime has no ${t.type} listener`;
    }
  }
  http.sort(byPrecedence);

  for (const hook of registeredHooks("appStart"))
    await hook({ hookData: {}, appHookData: appHookData(), functionAppDirectory: appDir });

  const server: RuntimeServer = await startRuntimeServer({
    host: opts.host ?? "127.0.0.1",
    port: opts.port ?? 7071,
    ...guard,
    http,
    eventGrid,
    inFlight,
    onError: (name, err) => onError(name)(err),
  });
  // 127.0.0.1, not "localhost": the server listens on IPv4 loopback, and "localhost" may resolve to ::1 first.
  const listenHost = opts.host ?? "127.0.0.1";
  const host =
    listenHost === "0.0.0.0" || listenHost === "::"
      ? "127.0.0.1"
      : listenHost.includes(":")
        ? `[${listenHost}]`
        : listenHost;
  const url = `http://${host}:${server.port}`;
  for (const f of functions) {
    if (f.triggerType.toLowerCase() === "httptrigger") f.url = `${url}${f.url ?? ""}`;
    if (f.triggerType.toLowerCase() === "eventgridtrigger")
      f.url = `${url}${EVENT_GRID_WEBHOOK_PATH}?functionName=${encodeURIComponent(f.name)}&code=${encodeURIComponent(guard.webhookKey)}`;
  }

  try {
    for (const t of timers) {
      await t.runner.start();
      const next = t.latest()?.next;
      if (next) t.fn.nextOccurrence = next;
    }
  } catch (err) {
    await Promise.all(timers.map((t) => t.runner.stop()));
    await server.close();
    throw err;
  }
  for (const q of queues) q.start();

  print(describeFunctions(functions));

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      const closed = server.close();
      await Promise.all([...queues.map((q) => q.stop()), ...timers.map((t) => t.runner.stop())]);
      await inFlight.drain();
      await closed;
      for (const hook of registeredHooks("appTerminate")) await hook({ hookData: {}, appHookData: appHookData() });
    })());

  return { url, port: server.port, functions, registered, stop };
}

/** The startup listing, shaped like `func start`'s "Functions:" block. */
export function describeFunctions(functions: RuntimeFunction[]): string {
  const lines = ["", "Functions:", ""];
  for (const f of functions) {
    const off = f.disabled ? " (disabled)" : f.notRunning ? ` (not run: ${f.notRunning})` : "";
    let detail: string;
    switch (f.triggerType.toLowerCase()) {
      case "httptrigger":
        detail = `[${(f.methods ?? []).join(",")}] ${f.url ?? ""}`;
        break;
      case "queuetrigger":
        detail = `queueTrigger  queue=${f.queueName ?? "?"} connection=${f.trigger.connection || "AzureWebJobsStorage"}`;
        break;
      case "timertrigger":
        detail = `timerTrigger  schedule="${f.schedule ?? "?"}"${f.nextOccurrence ? ` next=${f.nextOccurrence.toISOString()}` : ""}`;
        break;
      case "eventgridtrigger":
        detail = `eventGridTrigger  ${withoutKey(f.url ?? "")}`;
        break;
      default:
        detail = f.triggerType;
    }
    lines.push(`\t${f.name}: ${detail}${off}`);
  }
  lines.push("");
  return lines.join("\n");
}
