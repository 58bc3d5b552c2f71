import { randomBytes } from "node:crypto";
import { appendFileSync } from "node:fs";
// poolsync as the benchmark runs it: the real services from createServices (updater, cache, coalescer, event and
// timer code paths), the Storage queue on Azurite drained as the Functions host would (host.json's batchSize and
// newBatchThreshold), the simulator's events delivered to handleResourceEvent, the timer on its schedule.
import { QueueDrain } from "../local/stack/queueDrain";
import { QueueClient } from "@azure/storage-queue";
import { loadConfig } from "../src/config";
import { createServices, type Services } from "../src/app/services";
import type { Clock, Logger } from "../src/core/ports";
import type { DeclareMessage } from "../src/core/messages";
import { INTAKE_DEFER_REASON } from "../src/reconcile/reconcileRunner";
import type { ArmSimulator, EventGridEvent } from "../sim";
import { SIM_CA_FILE } from "../devkit/simulator";
import { uniqueName } from "../devkit/storage";
import type { HostProcessesOptions } from "./hostProcesses";
import type { StrategyRun } from "./peers";
import { IP_CONFIG, type Change } from "./world";
import { inEventPhase, TableCounter } from "./tableCounter";

export interface PoolsyncOptions {
  storage: string;
  subscriptions: string[];
  /** POOLSYNC_* settings on top of the benchmark's (e.g. POOLSYNC_CACHE_ENABLED=false). */
  env?: Record<string, string>;
  /** Deliver the simulator's ARM events to handleResourceEvent (Event Grid); false = TTL only. */
  events: boolean;
  /** Event Grid's delivery delay, simulated ms. */
  eventDelayMs: number;
  /** The timer's period, simulated ms (the default schedule is every 5 minutes); 0 = never. */
  timerEveryMs: number;
  random: () => number;
  /**
   * Function hosts at once (default 1), each with the memory of its own (createServices: pacers, coalescer, windows)
   * and its own queue listener, over the same tables, queue and ARM; events go to the hosts in turn, the timer runs
   * on the first (the one holding its listener lock).
   */
  hosts?: number;
  /**
   * The hosts as OS processes of their own (bench/poolsyncProcesses.ts), as Flex Consumption runs its instances, with
   * this schedule of instances added and killed; undefined: the hosts share this process.
   */
  processes?: HostSchedule;
  /**
   * How far poolsync's clock runs ahead of the simulator's (the scale workload ages its cache past the TTL at once).
   */
  clockAheadMs?: () => number;
}

/**
 * When instances come and go while a workload runs (real ms after the run's start): the run starts with `startWith`
 * of its hosts (default all) and adds one every `addEveryMs` until it has them all; at each of `killAtMs` it SIGKILLs
 * one instance that holds messages at that moment (mid-invocation), its messages coming back after `leaseSeconds`.
 */
export interface HostSchedule {
  startWith?: number;
  addEveryMs?: number;
  killAtMs?: number[];
  /** The queue listener's lease on a message, real seconds (default 30). */
  leaseSeconds?: number;
  /** How each instance starts: which hostProcess, Node settings, how many at once (bench/hostProcesses.ts). */
  start?: Pick<HostProcessesOptions, "entry" | "env" | "maxStarting">;
}

/** A declare message poolsync refused at intake, as its `message.refused` warning names it. */
export interface Refusal {
  scaleSetId: string;
  backendPoolId: string;
  state: string;
  reason: string;
}

export interface TraceLine {
  kind: "stored" | "model written" | "instance written";
  at: number;
  scaleSetId: string;
  /** "present:<pool>" / "absent:<pool>", lower case. */
  pools: string[];
}

/** A benchmark change as the declare message a caller puts on the queue (in-process hosts and processes alike). */
export function declareMessageOf(c: Change, now: number): DeclareMessage {
  return {
    v: 1,
    kind: "declare",
    scaleSetId: c.scaleSetId,
    backendPoolId: c.poolId,
    ipConfiguration: IP_CONFIG,
    state: c.state,
    requestId: `bench-${c.id}`,
    declaredAt: new Date(now).toISOString(),
  };
}

/** `BENCH_TRACE_LOG=file`: poolsync's every log line of the run, one JSON object per line with its real time. */
const TRACE_FILE = process.env.BENCH_TRACE_LOG;

/**
 * A logger that keeps counts and a few samples, not every line (runs make hundreds of thousands). `now`: when a line
 * was logged (real ms); instances in processes of their own pass their lines on with the time they were logged.
 */
export function countingLogger(now: () => number = Date.now): Logger & {
  counts: Record<string, number>;
  samples: Record<string, string[]>;
  reconciles: Array<Record<string, unknown>>;
  writesAt: number[];
  declaredAt: number[];
  trace: TraceLine[];
  refusals: Refusal[];
} {
  const counts: Record<string, number> = {};
  const samples: Record<string, string[]> = {};
  const reconciles: Array<Record<string, unknown>> = [];
  /** Real ms of each successful ARM write: where a run's time went. */
  const writesAt: number[] = [];
  /** Real ms of each declaration stored by a declare message: when the burst's intake ended. */
  const declaredAt: number[] = [];
  /** The lines a change's timeline is made of (declaration stored, ARM write answered), real ms: latency trace. */
  const trace: TraceLine[] = [];
  /** Declarations refused at intake (the caller is told: poison queue and a warning), so none is counted as lost. */
  const refusals: Refusal[] = [];
  const bump = (k: string, sample?: string) => {
    counts[k] = (counts[k] ?? 0) + 1;
    if (sample !== undefined) {
      const s = (samples[k] ??= []);
      if (s.length < 3) s.push(sample.slice(0, 300));
    }
  };
  const push = (level: string) => (event: string, fields: Record<string, unknown>) => {
    // Every line, for tracing where a run's time went (the counts below keep only samples).
    if (TRACE_FILE) appendFileSync(TRACE_FILE, JSON.stringify({ t: now(), level, event, ...fields }) + "\n");
    if (event === "reconcile") {
      reconciles.push({ ...fields, endedAt: now() });
      // A pass sent back while its host takes in declarations is counted apart from one deferred to a lease holder.
      const result = fields.reason === INTAKE_DEFER_REASON ? "sent back for the intake" : String(fields.result);
      bump(`reconcile:${result}`, fields.reason === undefined ? undefined : String(fields.reason));
    } else if (event === "declaration") {
      declaredAt.push(now());
      trace.push({
        kind: "stored",
        at: now(),
        scaleSetId: String(fields.scaleSetId).toLowerCase(),
        pools: [`${String(fields.state)}:${String(fields.backendPoolId).toLowerCase()}`],
      });
      bump(`${level}:${event}`);
    } else if (event === "arm.write") {
      const outcome = String(fields.outcome);
      if (outcome === "ok") {
        writesAt.push(now());
        trace.push({
          kind: String(fields.target) === "model" ? "model written" : "instance written",
          at: now(),
          scaleSetId: String(fields.scaleSetId).toLowerCase(),
          pools: (Array.isArray(fields.pools) ? fields.pools : []).map((p) => String(p).toLowerCase()),
        });
      }
      bump(
        `arm.write:${/^\w+/.exec(outcome === "ok" ? "ok" : (/: (\d{3}) /.exec(outcome)?.[1] ?? outcome))?.[0] ?? "?"}`,
        outcome === "ok" ? undefined : outcome,
      );
    } else {
      if (event === "message.refused" && fields.backendPoolId !== undefined)
        refusals.push({
          scaleSetId: String(fields.scaleSetId),
          backendPoolId: String(fields.backendPoolId),
          state: String(fields.state),
          reason: String(fields.reason),
        });
      bump(`${level}:${event}`, level === "info" ? undefined : JSON.stringify(fields));
    }
  };
  return {
    counts,
    samples,
    reconciles,
    writesAt,
    declaredAt,
    trace,
    refusals,
    info: push("info"),
    warn: push("warn"),
    error: push("error"),
  };
}

export interface PoolsyncRun extends StrategyRun {
  services: Services;
  tables: TableCounter;
  logs: ReturnType<typeof countingLogger>;
  runTimer(): Promise<void>;
}

/** The app settings of a benchmark run: fresh table and queue names, the simulator, timeouts sized to its time scale. */
export function poolsyncEnv(sim: ArmSimulator, opts: PoolsyncOptions): Record<string, string> {
  return {
    POOLSYNC_SCOPES: opts.subscriptions.map((s) => `/subscriptions/${s}`).join(","),
    POOLSYNC_BINDINGS: "*",
    ARM_ENDPOINT: sim.url,
    POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
    AzureWebJobsStorage: opts.storage,
    POOLSYNC_QUEUE: uniqueName("bench-"),
    POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("benchm"),
    POOLSYNC_CACHE_TABLE: uniqueName("benchc"),
    POOLSYNC_OPERATION_POLL_SECONDS: "1",
    // The simulator answers in milliseconds: a 5 s (real) request timeout, and a lease twice that on the simulated
    // clock, which a pass needs to write at all (LeaseGuard).
    POOLSYNC_ARM_TIMEOUT_SECONDS: "5",
    POOLSYNC_RECONCILE_LEASE_SECONDS: String(Math.max(60, Math.ceil(2 * 5 * sim.control.clock.timeScale) + 10)),
    // One key for every host of the run, as an app's hosts share theirs: without it each instance in a process of its
    // own has a random key and takes the rows the others stored (cache, leases, hand-overs) as unusable.
    POOLSYNC_CACHE_KEY: randomBytes(32).toString("base64url"),
    ...opts.env,
  };
}

export async function startPoolsync(sim: ArmSimulator, opts: PoolsyncOptions): Promise<PoolsyncRun> {
  const ahead = opts.clockAheadMs ?? (() => 0);
  const clock: Clock = { now: () => sim.control.clock.now() + ahead(), sleep: (ms) => sim.control.clock.sleep(ms) };
  const logs = countingLogger();
  const env = poolsyncEnv(sim, opts);
  const config = loadConfig(env);
  const tables = new TableCounter(opts.storage);
  const hosts = Array.from({ length: Math.max(1, opts.hosts ?? 1) }, () =>
    createServices(config, {
      clock,
      log: logs,
      random: opts.random,
      timeScale: sim.control.clock.timeScale,
      storagePolicies: [tables.policy],
    }),
  );
  const services = hosts[0] as Services;
  await services.ready();
  const counters = {
    closeAbandoned: 0,
    messages: 0,
    handlerErrors: 0,
    events: 0,
    eventErrors: 0,
    timerRuns: 0,
    timerReads: 0,
    reconcilesEnqueued: 0,
    queueReceives: 0,
  };
  for (const h of hosts) {
    const enqueue = h.queue.enqueueReconcile.bind(h.queue);
    h.queue.enqueueReconcile = (...args) => {
      counters.reconcilesEnqueued++;
      return enqueue(...args);
    };
  }
  const queue = new QueueClient(opts.storage, config.queueName);
  let stopped = false;
  let inflight = 0;
  const inflightOf = hosts.map(() => 0);
  let eventsInflight = 0;
  let timerBusy: Promise<void> | undefined;

  // The Functions host's queue listener, one per host: a batch of up to batchSize, a new fetch when newBatchThreshold
  // or fewer are still running (host.json's), each message settled by the host's rules. It polls every 50 ms real when the queue is empty (the host
  // backs off to 2 s real, which a time-scaled run would turn into minutes of simulated time), and a failed message is
  // visible again after 1 s real (host.json's 30 s would be an hour at the steady workload's scale).
  const triggers = hosts.map(
    (h) =>
      new QueueDrain(queue, h.queue.poison, (body, meta) => h.handleQueueMessage(body, meta), {
        options: { visibilityTimeoutMs: 1000 },
        leaseSeconds: 30,
      }),
  );
  const listener = Promise.all(
    hosts.map(async (_, host) => {
      const trigger = triggers[host]!;
      while (!stopped) {
        if (inflightOf[host]! > trigger.options.newBatchThreshold) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        const items = await trigger.poll().catch(() => []);
        counters.queueReceives++;
        if (items.length === 0) {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        for (const delivery of items) {
          inflight++;
          inflightOf[host]!++;
          void delivery
            .then(
              (d) => (d.settled === "completed" ? counters.messages++ : counters.handlerErrors++),
              () => counters.handlerErrors++,
            )
            .finally(() => {
              inflight--;
              inflightOf[host]!--;
            });
        }
      }
    }),
  );
  let nextHost = 0;

  const unsubscribe = opts.events
    ? sim.control.onEvent((e: EventGridEvent) => {
        eventsInflight++;
        void sim.control.clock
          .sleep(opts.eventDelayMs)
          .then(() => inEventPhase(() => (hosts[nextHost++ % hosts.length] as Services).handleResourceEvent(e)))
          .then(
            () => counters.events++,
            () => counters.eventErrors++,
          )
          .finally(() => eventsInflight--);
      })
    : () => undefined;

  const runTimer = async () => {
    const s = await services.reconcileStale();
    counters.timerRuns++;
    counters.timerReads += s.readsUsed;
  };
  const timerLoop = (async () => {
    if (opts.timerEveryMs <= 0) return;
    while (!stopped) {
      await sim.control.clock.sleep(opts.timerEveryMs);
      if (stopped) return;
      timerBusy = runTimer().catch(() => undefined);
      await timerBusy;
      timerBusy = undefined;
    }
  })();

  const quiet = async () =>
    stopped ||
    (inflight === 0 &&
      eventsInflight === 0 &&
      timerBusy === undefined &&
      ((await queue.getProperties().catch(() => ({ approximateMessagesCount: 0 }))).approximateMessagesCount ?? 0) ===
        0);

  return {
    services,
    tables,
    logs,
    runTimer,
    async submit(c: Change) {
      await services.queue.enqueueDeclare(declareMessageOf(c, clock.now()));
    },
    async idle() {
      // Twice quiet in a row, 100 ms real apart: a message handled just now may enqueue its follow-up.
      for (let calm = 0; calm < 2;) {
        await new Promise((r) => setTimeout(r, 100));
        calm = (await quiet()) ? calm + 1 : 0;
      }
      await Promise.all(hosts.map((h) => h.coalescer.idle()));
    },
    async close() {
      stopped = true;
      unsubscribe();
      await listener;
      // Bounded: what still runs after 20 s real is abandoned with its tables (counted as closeAbandoned).
      const deadline = Date.now() + 20_000;
      while ((inflight > 0 || eventsInflight > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      counters.closeAbandoned = inflight + eventsInflight;
      void timerLoop.catch(() => undefined); // it sleeps in simulated time; the simulator's stop releases it
      if (timerBusy) await timerBusy;
      await Promise.race([Promise.all(hosts.map((h) => h.coalescer.idle())), new Promise((r) => setTimeout(r, 5_000))]);
      await Promise.all(
        [
          services.declarations.table.deleteTable(),
          services.cache.table.deleteTable(),
          services.queue.queue.delete(),
          services.queue.poison.delete(),
        ].map((p) => p.catch(() => undefined)),
      );
    },
    own: () => ({ ...counters, tableOps: tables.ops }),
  };
}
