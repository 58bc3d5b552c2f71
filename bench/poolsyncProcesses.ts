// poolsync as N instances in N OS processes (bench/hostProcess.ts each), the way Flex Consumption runs a scaled-out
// app: nothing in memory shared, one instance's event loop no help to another's. This process keeps the benchmark's
// side only: it declares through the queue, delivers the simulator's events to the instances in turn, asks the first
// live instance to run the timer, adds and kills instances on the run's schedule, and gathers every instance's log
// lines, counters and Table round trips into the same PoolsyncRun the workloads read.
import { loadavg } from "node:os";
import { QueueClient } from "@azure/storage-queue";
import { loadConfig } from "../src/config";
import { createServices } from "../src/app/services";
import type { Clock } from "../src/core/ports";
import type { ArmSimulator, EventGridEvent } from "../sim";
import { HostProcesses, type HostInstance } from "./hostProcesses";
import type { HostBatch } from "./hostProcess";
import {
  countingLogger,
  declareMessageOf,
  poolsyncEnv,
  type HostSchedule,
  type PoolsyncOptions,
  type PoolsyncRun,
} from "./poolsyncRun";
import { TableCounter } from "./tableCounter";
import type { Change } from "./world";

/** A run's instances as they came and went, for the report. */
export interface ProcessFigures {
  hostsStarted: number;
  /** Instances that did not become ready in time (HostProcessesOptions.readyTimeoutMs). */
  hostsNotStarted: number;
  hostsKilled: number;
  /** Messages the killed instances held when they died. */
  killedHeld: number;
  /** The largest resident memory an instance reported (MB). */
  rssMaxMB: number;
  /** Real seconds from the run's start to each added instance being ready. */
  addedReadyS: number[];
  /** Each instance that became ready: real seconds from its fork, and the CPU seconds it had used by then. */
  startS: number[];
  startCpuS: number[];
  /** The machine's 1-minute load average when the instances were started and when the run closed. */
  load: { atStart: number; atClose?: number };
}

export type PoolsyncProcessesRun = PoolsyncRun & { hosts: HostProcesses; figures(): ProcessFigures };

const sleepReal = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startPoolsyncProcesses(
  sim: ArmSimulator,
  opts: PoolsyncOptions & { processes: HostSchedule },
): Promise<PoolsyncProcessesRun> {
  if (opts.clockAheadMs) throw new Error("clockAheadMs: instances in processes keep the simulator's own time");
  const schedule = opts.processes;
  const total = Math.max(1, opts.hosts ?? 1);
  const timeScale = sim.control.clock.timeScale;
  const clock: Clock = { now: () => sim.control.clock.now(), sleep: (ms) => sim.control.clock.sleep(ms) };
  // Each instance's lines are replayed here with the time they were logged there.
  let replayAt: number | undefined;
  const logs = countingLogger(() => replayAt ?? Date.now());
  const env = poolsyncEnv(sim, opts);
  const config = loadConfig(env);
  const tables = new TableCounter(opts.storage);
  // The benchmark's own client of the app's storage (declares through the queue, reads the declaration rows for the
  // accounting, deletes the tables at the end): it takes no message and no event.
  const services = createServices(config, {
    clock,
    log: logs,
    random: opts.random,
    timeScale,
    storagePolicies: [tables.policy],
  });
  await services.ready();
  const counters: Record<string, number> = {
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
  const onBatch = (b: HostBatch) => {
    for (const [level, event, fields, at] of b.logs) {
      replayAt = at;
      logs[level](event, fields);
    }
    replayAt = undefined;
    for (const [k, v] of Object.entries(b.counters)) counters[k] = (counters[k] ?? 0) + v;
    tables.ops += b.tables.ops;
    tables.eventOps += b.tables.eventOps;
    for (const [k, v] of Object.entries(b.tables.byMethod)) tables.byMethod[k] = (tables.byMethod[k] ?? 0) + v;
    for (const [k, v] of Object.entries(b.tables.partitionWrites))
      tables.partitionWrites.set(k, (tables.partitionWrites.get(k) ?? 0) + v);
  };
  const hosts = new HostProcesses({
    start: {
      env,
      clock: { simAt: sim.control.clock.now(), realAt: Date.now(), timeScale },
      leaseSeconds: schedule.leaseSeconds ?? 30,
      // A failed message is visible again after 1 s real (host.json's 30 s would be an hour at a steady workload's
      // scale), as with the hosts in one process.
      visibilityTimeoutMs: 1000,
    },
    randomSeed: Math.floor(opts.random() * 1e9),
    onBatch,
    out: (line) => console.error(line),
    ...schedule.start,
  });
  const load: ProcessFigures["load"] = { atStart: loadavg()[0] ?? 0 };
  const startWith = Math.min(total, Math.max(1, schedule.startWith ?? total));
  try {
    await hosts.add(startWith);
  } catch (err) {
    await hosts.stop(0);
    throw err;
  }
  const t0 = Date.now();
  let stopped = false;
  const addedReadyS: number[] = [];
  let adding = 0;
  const addOne = async () => {
    adding++;
    try {
      await hosts.add(1);
      addedReadyS.push((Date.now() - t0) / 1000);
    } finally {
      adding--;
    }
  };
  const waitUntil = async (atMs: number) => {
    while (!stopped && Date.now() - t0 < atMs) await sleepReal(Math.min(200, atMs - (Date.now() - t0)));
  };
  const scaling = (async () => {
    const every = schedule.addEveryMs ?? 0;
    const adds = Array.from({ length: total - startWith }, (_, i) => (i + 1) * every);
    const kills = [...(schedule.killAtMs ?? [])].sort((a, b) => a - b);
    const steps = [
      ...adds.map((at) => ({ at, kind: "add" as const })),
      ...kills.map((at) => ({ at, kind: "kill" as const })),
    ].sort((a, b) => a.at - b.at);
    const started: Promise<void>[] = [];
    for (const step of steps) {
      await waitUntil(step.at);
      if (stopped) break;
      if (step.kind === "add") started.push(addOne().catch((err: unknown) => console.error(`adding a host: ${err}`)));
      else {
        await hosts.killOneHolding(t0);
        // The platform starts an instance for a queue with messages when none is left.
        if (hosts.alive.length === 0 && !stopped) started.push(addOne());
      }
    }
    await Promise.all(started);
  })();

  let eventsInflight = 0;
  let timerBusy: Promise<void> | undefined;
  const firstAlive = (): HostInstance => {
    const h = hosts.alive[0];
    if (!h) throw new Error("no live host");
    return h;
  };
  const unsubscribe = opts.events
    ? sim.control.onEvent((e: EventGridEvent) => {
        eventsInflight++;
        void sim.control.clock
          .sleep(opts.eventDelayMs)
          .then(() => {
            const h = hosts.nextAlive();
            if (!h) throw new Error("no live host");
            return hosts.call(h, { kind: "event", event: e });
          })
          .then(
            () => counters.events!++,
            () => counters.eventErrors!++,
          )
          .finally(() => eventsInflight--);
      })
    : () => undefined;

  const runTimer = async () => {
    const reads = await hosts.call<number>(firstAlive(), { kind: "timer" });
    counters.timerRuns!++;
    counters.timerReads! += reads;
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

  const queue = new QueueClient(opts.storage, config.queueName);
  const quiet = async () => {
    if (stopped) return true;
    if (eventsInflight > 0 || timerBusy !== undefined || adding > 0) return false;
    if ((await hosts.status()).some((s) => s.inflight > 0)) return false;
    // The approximate count includes the messages a killed instance still hides under its lease.
    const props = await queue.getProperties().catch(() => ({ approximateMessagesCount: 0 }));
    return (props.approximateMessagesCount ?? 0) === 0;
  };

  const figures = (): ProcessFigures => ({
    // Those that became ready (one that did not start in time is no instance of the run).
    hostsStarted: hosts.all.filter((h) => h.ready).length,
    hostsNotStarted: hosts.all.filter((h) => !h.ready).length,
    hostsKilled: hosts.kills.length,
    killedHeld: hosts.kills.reduce((n, k) => n + k.heldMessages, 0),
    rssMaxMB: Math.round(Math.max(0, ...hosts.all.map((h) => h.rssBytes)) / 2 ** 20),
    addedReadyS,
    startS: hosts.all.flatMap((h) => (h.startMs === undefined ? [] : [h.startMs / 1000])),
    startCpuS: hosts.all.flatMap((h) => (h.startCpuMs === undefined ? [] : [h.startCpuMs / 1000])),
    load,
  });

  return {
    services,
    tables,
    logs,
    runTimer,
    hosts,
    figures,
    async submit(c: Change) {
      await services.queue.enqueueDeclare(declareMessageOf(c, clock.now()));
    },
    async idle() {
      // Twice quiet in a row, 100 ms real apart: a message handled just now may enqueue its follow-up.
      for (let calm = 0; calm < 2;) {
        await sleepReal(100);
        calm = (await quiet()) ? calm + 1 : 0;
      }
      await hosts.coalescersIdle();
    },
    async close() {
      await hosts.status(); // the instances' last memory figures
      load.atClose = loadavg()[0];
      stopped = true;
      unsubscribe();
      await scaling.catch(() => undefined);
      if (timerBusy) await timerBusy;
      // Bounded: what still runs after 20 s real is abandoned with its tables (counted as closeAbandoned).
      const { abandoned } = await hosts.stop(20_000);
      counters.closeAbandoned = abandoned + eventsInflight;
      void timerLoop.catch(() => undefined); // it sleeps in simulated time; the simulator's stop releases it
      await Promise.all(
        [
          services.declarations.table.deleteTable(),
          services.cache.table.deleteTable(),
          services.queue.queue.delete(),
          services.queue.poison.delete(),
        ].map((p) => p.catch(() => undefined)),
      );
    },
    own: () => {
      const f = figures();
      return {
        ...counters,
        tableOps: tables.ops,
        hostsStarted: f.hostsStarted,
        hostsKilled: f.hostsKilled,
        killedHeld: f.killedHeld,
        rssMaxMB: f.rssMaxMB,
      };
    },
  };
}
