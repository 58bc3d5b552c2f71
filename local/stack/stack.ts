import { request } from "node:http";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim";
import {
  azuriteConnectionString,
  ensureAzurite,
  isPortOpen,
  type AzuritePorts,
  type RunningAzurite,
} from "../../devkit/azurite";
import { EventForwarder } from "./eventForwarder";
import type { QueueHostOptions } from "../host/hostConfig";
import { startHosts, type HostHandle } from "../host/hosts";
import type { InvocationLogger } from "../host/invoke";
import type { LocalOptions } from "./localOptions";
import { startLocalRuntime, withoutKey, type LocalRuntime } from "../host/runtime";

/**
 * The whole app on one machine, as `npm run local` and `npm run demo` run it: Azurite (reused when its ports are
 * already served by Azurite), the ARM simulator seeded with the demo world (unless ARM is real), the local
 * Functions runtime, and the simulator's ARM events delivered to the runtime's own Event Grid webhook.
 */

export interface LocalStackOptions extends LocalOptions {
  /** Startup lines; default console.log. */
  print?: (line: string) => void;
  log?: InvocationLogger;
  queues?: Partial<QueueHostOptions>;
  timerStatus?: "storage" | "memory";
  /** Extra simulator options (the demo's operation duration, say). */
  simulatorOptions?: Partial<ArmSimulatorOptions>;
  /** Timer listener locks of the hosts (tests shorten the interval at which a host takes over a dead one's timer). */
  timerLock?: { leaseSeconds?: number; recoveryPollMs?: number };
}

/** What callers use of the runtime; with several hosts, the first host's (its URL, its functions). */
export type StackRuntime = Pick<LocalRuntime, "url" | "port" | "functions" | "stop">;

export interface LocalStack {
  runtime: StackRuntime;
  /** With --hosts N > 1: each host's process (empty when the one host runs in this process). */
  hosts: HostHandle[];
  simulator: ArmSimulator | undefined;
  azurite: (RunningAzurite & { dataDir: string | undefined }) | undefined;
  forwarder: EventForwarder | undefined;
  /** The AzureWebJobsStorage the app uses (the explicit Azurite connection string locally). */
  storageConnectionString: string;
  /** The app settings the runtime was given (ARM_ENDPOINT with the simulator's actual port). */
  settings: Record<string, string>;
  /** Where everything is, for people: Azurite, the simulator, events, settings. */
  summary(): string[];
  /**
   * Stops taking events, drains the runtime's in-flight invocations, then stops the simulator and Azurite it started.
   */
  stop(): Promise<{ droppedEvents: number }>;
}

/** The `Server` header of a GET to a port: Azurite answers `Azurite-Blob/3.35.0` and the like, even to a 403. */
function serverHeader(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/", method: "GET", timeout: 2000 }, (res) => {
      res.resume();
      resolve(typeof res.headers.server === "string" ? res.headers.server : undefined);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end();
  });
}

/** Reuse Azurite if it already serves all three ports; refuse ports held by something else; else start one. */
async function azuriteFor(ports: AzuritePorts, dataDir: string | undefined): Promise<RunningAzurite> {
  const services = [
    ["blob", ports.blob],
    ["queue", ports.queue],
    ["table", ports.table],
  ] as const;
  const open = await Promise.all(services.map(([, p]) => isPortOpen(p)));
  if (open.some(Boolean)) {
    const servers = await Promise.all(
      services.map(([, p], i) => (open[i] ? serverHeader(p) : Promise.resolve(undefined))),
    );
    const foreign = services.filter((_, i) => open[i] && !/^Azurite/i.test(servers[i] ?? ""));
    if (foreign.length > 0) {
      throw new Error(
        `Port ${foreign.map(([name, p]) => `${p} (${name})`).join(", ")} is taken by something that is not Azurite; choose others with --blob-port/--queue-port/--table-port`,
      );
    }
  }
  return ensureAzurite(ports, { ...(dataDir ? { dataDir } : {}), ownProcessGroup: true });
}

export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const started: { stop(): Promise<unknown> }[] = [];
  const undo = async () => {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
  };

  try {
    let azurite: LocalStack["azurite"];
    let storageConnectionString = opts.settings.AzureWebJobsStorage ?? "";
    if (opts.azurite) {
      const running = await azuriteFor(opts.azurite.ports, opts.azurite.dataDir);
      azurite = { ...running, dataDir: opts.azurite.dataDir };
      started.push(running);
      storageConnectionString = azuriteConnectionString(opts.azurite.ports);
    }

    let simulator: ArmSimulator | undefined;
    let forwarder: EventForwarder | undefined;
    if (opts.simulator) {
      if (opts.events)
        forwarder = new EventForwarder({
          delayMs: opts.events.delayMs,
          ...(opts.events.eventGridSeed !== undefined
            ? { eventGrid: { seed: opts.events.eventGridSeed, timeScale: opts.simulatorOptions?.timeScale ?? 1 } }
            : {}),
          onError: (m) => console.error(`[events] ${m}`),
        });
      const fw = forwarder;
      simulator = await startArmSimulator({
        port: opts.simulator.port,
        tls: true,
        seed: "demo",
        ...(opts.throttling ? { throttling: true } : {}),
        ...opts.simulatorOptions,
        // Registered before the first write, so no event is missed; held until the runtime's webhook is up.
        ...(fw ? { onEvent: (e) => fw.publish(e) } : {}),
      });
      started.push(simulator);
    }

    // Port 0 picks a free port: the app must be told the one the simulator got.
    const settings: Record<string, string> = { ...opts.settings };
    if (simulator) settings.ARM_ENDPOINT = simulator.url;
    const runtimeOptions = {
      appDir: opts.appDir,
      settings,
      host: opts.host,
      ...(opts.allowRemote ? { allowRemote: true } : {}),
      ...(opts.azurite ? { storageConnectionString } : {}),
      ...(opts.queues ? { queues: opts.queues } : {}),
      ...(opts.timerStatus ? { timerStatus: opts.timerStatus } : {}),
      ...(opts.timerLock ? { timerLock: opts.timerLock } : {}),
    };
    const webhooksOf = (functions: StackRuntime["functions"]) =>
      functions
        .filter((f) => f.triggerType.toLowerCase() === "eventgridtrigger" && !f.disabled && f.url)
        .map((f) => f.url as string);
    let runtime: StackRuntime;
    let hosts: HostHandle[] = [];
    if ((opts.hosts ?? 1) > 1) {
      // Each host its own process, as on a scaled-out Function App: nothing in memory is shared between them.
      hosts = await startHosts({ count: opts.hosts, firstPort: opts.runtimePort, runtime: runtimeOptions, out: print });
      const all = hosts;
      runtime = {
        url: all[0]!.url,
        port: all[0]!.port,
        functions: all[0]!.functions,
        stop: () => Promise.all(all.map((h) => h.stop())).then(() => undefined),
      };
      forwarder?.setHostTargets(hosts.map((h) => webhooksOf(h.functions)));
    } else {
      runtime = await startLocalRuntime({
        ...runtimeOptions,
        port: opts.runtimePort,
        ...(opts.log ? { log: opts.log } : {}),
        print,
      });
      forwarder?.setTargets(webhooksOf(runtime.functions));
    }
    started.push(runtime);
    const webhooks = hosts.length > 0 ? hosts.flatMap((h) => webhooksOf(h.functions)) : webhooksOf(runtime.functions);

    const summary = (): string[] => {
      const lines: string[] = [];
      if (azurite) {
        const where = `blob http://127.0.0.1:${azurite.ports.blob}, queue http://127.0.0.1:${azurite.ports.queue}, table http://127.0.0.1:${azurite.ports.table}`;
        lines.push(
          `Azurite: ${where} (${azurite.owned ? (azurite.dataDir ? `started, data in ${azurite.dataDir}` : "started, in memory") : "already running, reused"})`,
        );
      } else {
        lines.push(`Storage: AzureWebJobsStorage as set (no Azurite started)`);
      }
      if (simulator) {
        lines.push(
          `ARM simulator: ${simulator.url} (seed demo; ${opts.throttling ? "CRP and ARM throttling enforced" : "throttling not enforced"}; control API ${simulator.url}/_sim/; CA ${settings.POOLSYNC_ARM_CA_FILE ?? "?"})`,
        );
        lines.push(
          forwarder
            ? `ARM events: simulator → ${webhooks.length ? webhooks.map(withoutKey).join(", ") : "(no Event Grid function)"}${hosts.length > 1 ? " (each event to one host, in turn)" : ""} ${opts.events?.eventGridSeed !== undefined ? `as Event Grid delivers (seed ${opts.events.eventGridSeed}: at least once, out of order, some twice, some late on its retry schedule)` : `after ${opts.events?.delayMs ?? 0} ms`}`
            : `ARM events: off (--no-events); the reconcileStale timer covers drift`,
        );
      } else {
        lines.push(
          `ARM: ${settings.ARM_ENDPOINT} (DefaultAzureCredential unless POOLSYNC_ARM_CREDENTIAL says otherwise); no events reach this machine, the timer covers`,
        );
      }
      if (hosts.length > 0)
        lines.push(
          `Hosts: ${hosts.map((h) => `${h.url} (pid ${h.pid})`).join(", ")}; the queue is polled by all, each timer runs on one at a time`,
        );
      lines.push(`Scopes: ${settings.POOLSYNC_SCOPES ?? "?"}`);
      lines.push(`Settings: ${opts.settingsSource ?? "none (defaults)"}, environment variables win`);
      return lines;
    };

    let stopping: Promise<{ droppedEvents: number }> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        // Events first (nothing new reaches the webhook), then the runtime drains, then what it talks to.
        const droppedEvents = (await forwarder?.stop()) ?? 0;
        await runtime.stop();
        await simulator?.stop();
        await azurite?.stop();
        return { droppedEvents };
      })());

    return { runtime, hosts, simulator, azurite, forwarder, storageConnectionString, settings, summary, stop };
  } catch (err) {
    await undo();
    throw err;
  }
}
