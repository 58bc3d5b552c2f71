// One poolsync instance of the benchmark's hosts section, in a process of its own (bench/hostProcesses.ts starts
// it): its own createServices (pacers, coalescer, windows, memory), its own queue listener, its own event loop. Its
// clock is the simulator's, computed from the wall clock (the simulator's clock is a pure function of it: simulated
// time = a start plus real time × timeScale, never advanced in the benchmark). Every log line, counter and Table
// round trip goes to the parent in batches, so the workloads keep their accounting as with hosts in one process.
import { QueueClient } from "@azure/storage-queue";
import { loadConfig } from "../src/config";
import { createServices, type Services } from "../src/app/services";
import type { Clock, Logger } from "../src/core/ports";
import { QueueDrain } from "../local/stack/queueDrain";
import { inEventPhase, TableCounter } from "./tableCounter";
import { prng } from "./stats";

export interface HostStart {
  kind: "start";
  /** The app settings every instance gets (the tables', the queue's names and the simulator's address). */
  env: Record<string, string>;
  /** The simulator's time at `realAt` (Date.now()), and its scale. */
  clock: { simAt: number; realAt: number; timeScale: number };
  randomSeed: number;
  /** The queue listener's lease on a message (real seconds): how long a killed instance's messages stay hidden. */
  leaseSeconds: number;
  /** When a failed message is visible again (real ms). */
  visibilityTimeoutMs: number;
}

export type HostCall =
  | { kind: "event"; id: number; event: unknown }
  | { kind: "timer"; id: number }
  | { kind: "status"; id: number }
  | { kind: "coalescerIdle"; id: number }
  | { kind: "stop"; id: number; drainMs: number };

export type ToHost = HostStart | HostCall;

/** A log call as the instance made it: level, event, fields, Date.now() at the call. */
export type LogRecord = [level: "info" | "warn" | "error", event: string, fields: Record<string, unknown>, at: number];

/** What changed since the previous batch. */
export interface HostBatch {
  kind: "batch";
  logs: LogRecord[];
  counters: Record<string, number>;
  tables: { ops: number; eventOps: number; byMethod: Record<string, number>; partitionWrites: Record<string, number> };
  /** Messages this instance holds now (taken, not yet settled). */
  inflight: number;
}

export type FromHost =
  | { kind: "ready"; rssBytes: number; cpuMs: number }
  | { kind: "failed"; error: string }
  | HostBatch
  | { kind: "reply"; id: number; value?: unknown; error?: string };

const send = (m: FromHost) => process.send?.(m);

/** Fields as JSON carries them: an Error as its message (IPC would make it `{}`). */
function plain(fields: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(fields, (_k, v: unknown) =>
      v instanceof Error ? v.message : typeof v === "bigint" ? String(v) : v,
    ),
  ) as Record<string, unknown>;
}

class Outbox {
  logs: LogRecord[] = [];
  counters: Record<string, number> = {};
  bump(k: string, by = 1): void {
    this.counters[k] = (this.counters[k] ?? 0) + by;
  }
}

async function main(start: HostStart): Promise<void> {
  const { simAt, realAt, timeScale } = start.clock;
  const clock: Clock = {
    now: () => simAt + (Date.now() - realAt) * timeScale,
    // As the system clock sleeps: an abort (a pass's lease renewal ending) ends the sleep at once.
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const stop = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(
          () => {
            signal?.removeEventListener("abort", stop);
            resolve();
          },
          Math.max(0, ms / timeScale),
        );
        signal?.addEventListener("abort", stop, { once: true });
      }),
  };
  const out = new Outbox();
  const record =
    (level: LogRecord[0]) =>
    (event: string, fields: Record<string, unknown>): void => {
      out.logs.push([level, event, plain(fields), Date.now()]);
    };
  const log: Logger = { info: record("info"), warn: record("warn"), error: record("error") };
  const config = loadConfig(start.env);
  const tables = new TableCounter(start.env.AzureWebJobsStorage ?? "");
  const services: Services = createServices(config, {
    clock,
    log,
    random: prng(start.randomSeed),
    timeScale,
    storagePolicies: [tables.policy],
  });
  await services.ready();
  const enqueue = services.queue.enqueueReconcile.bind(services.queue);
  services.queue.enqueueReconcile = (...args) => {
    out.bump("reconcilesEnqueued");
    return enqueue(...args);
  };

  let inflight = 0;
  const flush = () => {
    const batch: HostBatch = {
      kind: "batch",
      logs: out.logs,
      counters: out.counters,
      tables: {
        ops: tables.ops,
        eventOps: tables.eventOps,
        byMethod: { ...tables.byMethod },
        partitionWrites: Object.fromEntries(tables.partitionWrites),
      },
      inflight,
    };
    out.logs = [];
    out.counters = {};
    tables.reset();
    send(batch);
  };
  const flusher = setInterval(flush, 50);

  // The Functions host's queue listener as the in-process benchmark runs it (poolsyncRun.ts): batches of up to
  // batchSize, a new fetch at newBatchThreshold or fewer in flight, a 50 ms real poll when the queue is empty.
  const queue = new QueueClient(start.env.AzureWebJobsStorage ?? "", config.queueName);
  const trigger = new QueueDrain(
    queue,
    services.queue.poison,
    (body, meta) => services.handleQueueMessage(body, meta),
    {
      options: { visibilityTimeoutMs: start.visibilityTimeoutMs },
      leaseSeconds: start.leaseSeconds,
    },
  );
  let stopped = false;
  const listener = (async () => {
    while (!stopped) {
      if (inflight > trigger.options.newBatchThreshold) {
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      const items = await trigger.poll().catch(() => []);
      out.bump("queueReceives");
      if (items.length === 0) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      for (const delivery of items) {
        inflight++;
        void delivery
          .then(
            (d) => out.bump(d.settled === "completed" ? "messages" : "handlerErrors"),
            () => out.bump("handlerErrors"),
          )
          .finally(() => inflight--);
      }
    }
  })();

  const answer = async (id: number, work: () => Promise<unknown>) => {
    try {
      const value = await work();
      flush(); // the log lines of the work first: the parent reads them once it has the answer
      send({ kind: "reply", id, value });
    } catch (err) {
      flush();
      send({ kind: "reply", id, error: (err as Error)?.message ?? String(err) });
    }
  };
  process.on("message", (m: ToHost) => {
    switch (m.kind) {
      case "event":
        void answer(m.id, () => inEventPhase(() => services.handleResourceEvent(m.event)).then(() => null));
        break;
      case "timer":
        void answer(m.id, async () => (await services.reconcileStale()).readsUsed);
        break;
      case "status":
        void answer(m.id, async () => ({ inflight, rssBytes: process.memoryUsage().rss }));
        break;
      case "coalescerIdle":
        void answer(m.id, () => services.coalescer.idle().then(() => null));
        break;
      case "stop":
        void answer(m.id, async () => {
          stopped = true;
          await listener;
          const deadline = Date.now() + m.drainMs;
          while (inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          return { abandoned: inflight, rssBytes: process.memoryUsage().rss };
        }).then(() => {
          clearInterval(flusher);
          process.exit(0);
        });
        break;
    }
  });
  const cpu = process.cpuUsage();
  send({ kind: "ready", rssBytes: process.memoryUsage().rss, cpuMs: (cpu.user + cpu.system) / 1000 });
}

if (require.main === module) {
  // The parent gone (its run stopped, or it died): nothing of this instance is wanted any more.
  process.on("disconnect", () => process.exit(0));
  process.once("message", (m: ToHost) => {
    if (m.kind !== "start") return;
    main(m).catch((err: unknown) => {
      send({ kind: "failed", error: (err as Error)?.stack ?? String(err) });
      process.exit(1);
    });
  });
}
