import type { EventGridEvent } from "../../sim";
import type { StaleRunSummary } from "../../src/reconcile/reconcileStale";
import { QueueDrain } from "../../local/stack/queueDrain";
import { planDelivery, retryWithinTtlMs } from "../../local/stack/eventGridDelivery";
import type { Hosts, Proc } from "./hosts";
import type { SoakRun } from "./run";
import { MAX_DEQUEUE, VISIBILITY_S, type SoakWorld } from "./world";

// Delivery to the app's current process: Event Grid's (as it really delivers by default: at least once, out of order,
// some twice, some hours late on its retry schedule; plus lost events and odd URIs), the queue trigger's by the
// host's rules, and the timer's every five simulated minutes.

interface Pending {
  due: number;
  event: unknown;
  seq: number;
  tries: number;
}

export class Delivery {
  readonly pendingEvents: Pending[] = [];
  /** The highest reconcile attempt any message carried. */
  maxAttemptSeen = 0;
  /** The timer stops with the chaos; the quiesce runs it by hand. */
  timerOn = true;
  #stopped = false;
  #loops: Promise<unknown> | undefined;
  readonly deliverEvents: (all: boolean) => Promise<void>;
  readonly pumpQueue: (host: Proc) => Promise<number>;
  readonly runTimer: () => Promise<StaleRunSummary | undefined>;

  constructor(world: SoakWorld, run: SoakRun, hosts: Hosts) {
    const { c, queue, poisonQueue } = world;
    const simClock = c.clock;
    const rand = run.rand;
    const chance = (p: number) => run.chance(p);
    const bump = (k: string, n = 1) => run.bump(k, n);
    const tryFault = run.tryFault.bind(run);
    const pendingEvents = this.pendingEvents;
    const eventGrid = (run.opts.eventDelivery ?? "eventGrid") === "eventGrid";
    // Events: Event Grid's delivery, with its faults.
    let emitted = 0;
    let lastDeliveredSeq = -1;
    c.onEvent((e: EventGridEvent) => {
      const seq = emitted++;
      const now = simClock.now();
      let event: unknown = e;
      if (chance(0.15)) {
        // Odd casing and a trailing slash on the URI, some in the CloudEvents schema.
        const odd =
          e.data.resourceUri.toUpperCase().replace("/VIRTUALMACHINESCALESETS/", "/virtualmachinescalesets/") + "/";
        const data = { ...e.data, resourceUri: odd };
        event = chance(0.5)
          ? { specversion: "1.0", type: e.eventType, source: e.topic, subject: odd, id: e.id, time: e.eventTime, data }
          : { ...e, subject: odd, data };
        tryFault("event URI odd casing / trailing slash / CloudEvents", "*");
      }
      if (chance(0.04)) {
        tryFault("event lost", "*");
        return;
      }
      if (eventGrid) {
        // Event Grid's own delivery: every choice from the run's PRNG, so the seed replays it.
        const plan = planDelivery(rand);
        if (plan.receivedAtMs.length > 1) tryFault("event duplicated", "*");
        if ((plan.receivedAtMs[0] ?? 0) > 300_000) tryFault("event delayed past the next timer run", "*");
        bump("event:deliveries-planned", plan.receivedAtMs.length);
        bump("event:attempts-failed", plan.failedAttempts);
        for (const at of plan.receivedAtMs) pendingEvents.push({ due: now + at, event, seq, tries: 0 });
        return;
      }
      if (chance(0.05)) {
        tryFault("event delayed past the next timer run", "*");
        pendingEvents.push({ due: now + 400_000, event, seq, tries: 0 });
        return;
      }
      pendingEvents.push({ due: now + 1_000 + rand() * 20_000, event, seq, tries: 0 });
      if (chance(0.08)) {
        tryFault("event duplicated", "*");
        pendingEvents.push({ due: now + rand() * 90_000, event, seq, tries: 0 });
      }
    });
    this.deliverEvents = async (all: boolean) => {
      const now = simClock.now();
      const due = pendingEvents.filter((p) => all || p.due <= now);
      if (due.length === 0) return;
      for (const p of due) pendingEvents.splice(pendingEvents.indexOf(p), 1);
      const p0 = hosts.nextProc();
      await Promise.race([
        p0.died,
        Promise.all(
          due.map(async (p) => {
            if (p.seq < lastDeliveredSeq) tryFault("event reordered", "*");
            lastDeliveredSeq = Math.max(lastDeliveredSeq, p.seq);
            try {
              const outcome = await p0.services.handleResourceEvent(p.event);
              bump(`event:${outcome}`);
            } catch {
              // The webhook answered 500: Event Grid retries (10 s, 30 s, 1 min, ...), for a bounded number of times
              // here.
              bump("event:delivery-failed");
              const retryIn = eventGrid ? retryWithinTtlMs(p.tries) : p.tries < 8 ? 10_000 * 2 ** p.tries : undefined;
              if (retryIn !== undefined)
                pendingEvents.push({ ...p, due: simClock.now() + retryIn, tries: p.tries + 1 });
              else bump("event:given-up");
            }
          }),
        ),
      ]);
    };

    // The queue trigger.
    // The host's rules (local/stack/queueDrain.ts), with a short lease and visibility timeout so that the message of
    // a killed or failed invocation comes back soon; a drain per process, abandoning its messages when it dies.
    const triggers = new WeakMap<Proc, QueueDrain<void>>();
    const triggerOf = (p: Proc): QueueDrain<void> => {
      let t = triggers.get(p);
      if (!t) {
        t = new QueueDrain(
          queue,
          poisonQueue,
          async (body, meta) => {
            this.maxAttemptSeen = Math.max(
              this.maxAttemptSeen,
              (body as { attempt?: number } | undefined)?.attempt ?? 0,
            );
            const rid = (body as { requestId?: unknown } | undefined)?.requestId;
            const requestId = typeof rid === "string" ? rid : undefined;
            if (requestId) run.requestOfMessage.set(meta.id, requestId);
            const who = `host ${p.id} message ${meta.id} dequeue ${meta.dequeueCount}`;
            let outcome;
            try {
              outcome = await p.services.handleQueueMessage(body, meta);
            } catch (err) {
              if (requestId)
                run.note(requestId, `${who}: threw ${(err as Error)?.message?.slice(0, 80) ?? String(err)}`);
              throw err;
            }
            if (requestId)
              run.note(requestId, `${who}: queue:${outcome.result}${p.dead ? " (host died meanwhile)" : ""}`);
            bump(`queue:${outcome.result}`);
          },
          {
            options: { visibilityTimeoutMs: VISIBILITY_S * 1000, maxDequeueCount: MAX_DEQUEUE },
            leaseSeconds: VISIBILITY_S,
            died: p.died,
          },
        );
        triggers.set(p, t);
      }
      return t;
    };
    this.pumpQueue = async (p0: Proc): Promise<number> => {
      let items;
      try {
        items = await triggerOf(p0).poll();
      } catch {
        bump("queue:receive-failed");
        return -1;
      }
      // Settling (delete, release) fails while Azurite is down, as the host's would: the message comes back after its
      // visibility timeout. Caught per message, so neither this loop nor a dead host's abandoned batch rejects unheard.
      const each = items.map((d) =>
        d.catch(() => {
          bump("queue:settle-failed");
          return undefined;
        }),
      );
      const settled = await Promise.race([p0.died.then(() => []), Promise.all(each)]);
      for (const d of settled) if (d) bump(`queue:settled:${d.settled}`); // released: visible again after the visibility timeout
      bump("queue:handled", items.length);
      return items.length;
    };

    this.runTimer = async () => {
      const p0 = hosts.current;
      try {
        const run = p0.services.reconcileStale();
        run.catch(() => undefined); // a dead host's timer may still fail: nobody is left to hear it
        const s = await Promise.race([p0.died.then(() => undefined), run]);
        bump("timer:runs");
        if (s) bump("timer:enqueued", s.enqueued);
        return s;
      } catch (err) {
        bump("timer:failed");
        const why = err instanceof Error ? err.message : String(err);
        bump(`timer:why:${why.replace(/\/subscriptions\/\S+|\d+/g, "#").slice(0, 70)}`);
        return undefined;
      }
    };
  }

  /** The queue trigger, the Event Grid deliveries and the timer, running until stop(). */
  start(world: SoakWorld, hosts: Hosts): void {
    const simClock = world.c.clock;
    // Every host polls the queue (a revived host takes its slot's place).
    const queueLoop = Promise.all(
      hosts.procs.map(async (_, slot) => {
        while (!this.#stopped) {
          const n = await this.pumpQueue(hosts.procs[slot] as Proc);
          if (n <= 0) await new Promise((r) => setTimeout(r, 40));
        }
      }),
    );
    const eventLoop = (async () => {
      while (!this.#stopped) {
        await this.deliverEvents(false);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const timerLoop = (async () => {
      let next = simClock.now() + 300_000;
      while (!this.#stopped) {
        if (this.timerOn && simClock.now() >= next) {
          next = simClock.now() + 300_000;
          await this.runTimer();
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    this.#loops = Promise.all([queueLoop, eventLoop, timerLoop]);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loops;
  }
}
