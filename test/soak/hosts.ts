import { armComputeFromConfig, createServices, type Services } from "../../src/app/services";
import type { Clock, ComputePort, Logger } from "../../src/core/ports";
import { seededRandom as prng } from "../../sim/random";
import type { SoakRun } from "./run";
import type { SoakWorld } from "./world";

// The app's processes (--hosts of them at once): each its own services over a Compute port and clock that a kill
// freezes for good; the platform starts a new one in place of each that dies.

export interface Proc {
  id: number;
  services: Services;
  dead: boolean;
  died: Promise<void>;
  kill(): void;
  /** Kill after this many more Compute calls have returned (the call's effect has happened). */
  killAfter: number | undefined;
}

const never = <T>() => new Promise<T>(() => undefined);

function countingLogger(
  counters: Record<string, number>,
  errors: string[],
  writes: SoakRun["writes"],
  now: () => number,
  proc: () => number,
  requestOfMessage: ReadonlyMap<string, string>,
  note: (requestId: string, what: string) => void,
): Logger {
  const bump = (k: string) => (counters[k] = (counters[k] ?? 0) + 1);
  return {
    info(event, fields) {
      // Every write attempt, by what it wrote: a violation names the writes that reached its instance.
      if (event === "arm.write") {
        const key = `${String(fields.scaleSetId)}|${String(fields.target)}`.toLowerCase();
        const list = writes.get(key) ?? [];
        list.push(
          `${new Date(now()).toISOString()} host ${proc()} If-Match ${String(fields.ifMatch)} ${String(fields.outcome)} → ${String(fields.etag ?? "-")}`,
        );
        writes.set(key, list.slice(-12));
      }
      // A declaration's upsert, by its queue message: the trace of that declaration says how its row write went.
      if (event === "declaration") {
        const requestId = requestOfMessage.get(String(fields.messageId));
        if (requestId) note(requestId, `host ${proc()} upsert ${String(fields.result)}`);
      }
      if (event === "reconcile") {
        bump(`reconcile:${String(fields.result)}`);
        if (fields.result === "requeued" || fields.result === "failed")
          bump(
            `why:${String(fields.reason ?? "")
              .replace(/[0-9a-f-]{36}|\/subscriptions\/\S+|\d+/g, "#")
              .slice(0, 70)}`,
          );
      }
    },
    warn(event) {
      bump(`warn:${event}`);
    },
    error(event, fields) {
      bump(`error:${event}`);
      if (errors.length < 50) errors.push(`${event} ${JSON.stringify(fields).slice(0, 400)}`);
    },
  };
}

export class Hosts {
  /** Every Function host at once, each polling the queue; index 0 also runs the timer (the host's listener lock). */
  readonly procs: Proc[];
  #seq = 0;
  #next = 0;
  #reviving: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly world: SoakWorld,
    private readonly run: SoakRun,
  ) {
    this.procs = Array.from({ length: Math.max(1, Math.floor(run.opts.hosts ?? 1)) }, () => this.#newProc());
  }

  /** The host that runs the timer and answers the invariants' reads. */
  get current(): Proc {
    return this.procs[0] as Proc;
  }

  /** The next host in turn: Event Grid spreads deliveries over the instances. */
  nextProc(): Proc {
    return this.procs[this.#next++ % this.procs.length] as Proc;
  }

  /** The resurrection of killed processes: the platform starts a new host in place of each that died. */
  startReviving(): void {
    this.#reviving ??= (async () => {
      while (!this.#stopped) {
        for (let i = 0; i < this.procs.length; i++) {
          if (this.procs[i]!.dead) {
            this.run.bump("platform:process-restarts");
            this.procs[i] = this.#newProc();
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#reviving;
  }

  #newProc(): Proc {
    const { config, c, T } = this.world;
    const { counters, appErrors, opts } = this.run;
    const simClock = c.clock;
    let release: () => void = () => undefined;
    const died = new Promise<void>((r) => (release = r));
    const p: Proc = {
      id: ++this.#seq,
      dead: false,
      died,
      killAfter: undefined,
      kill() {
        if (p.dead) return;
        p.dead = true;
        release();
      },
      services: undefined as unknown as Services,
    };
    const clock: Clock = {
      now: () => simClock.now(),
      sleep: async (ms) => {
        if (p.dead) return never();
        await simClock.sleep(ms);
        if (p.dead) return never();
      },
    };
    const arm = armComputeFromConfig(config, clock);
    const guard =
      <A extends unknown[], R>(call: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        if (p.dead) return never();
        let r: R;
        try {
          r = await call(...a);
        } catch (err) {
          if (p.dead) return never();
          throw err;
        }
        if (p.killAfter !== undefined && --p.killAfter <= 0) {
          p.kill(); // the call happened (a write is on ARM); the process dies before it learns the answer
        }
        if (p.dead) return never();
        return r;
      };
    const compute: ComputePort = {
      getScaleSet: guard((r) => arm.getScaleSet(r)),
      listScaleSetsPage: guard((s, n) => arm.listScaleSetsPage(s, n)),
      writeScaleSetNics: guard((r, b, n, o) => arm.writeScaleSetNics(r, b, n, o)),
      listInstances: guard((r) => arm.listInstances(r)),
      getInstance: guard((r) => arm.getInstance(r)),
      writeInstanceNics: guard((r, b, n, o) => {
        // The chaos that must land while a reconcile writes instances starts here, beside the write.
        for (const hook of this.run.takeInstanceWriteHooks(r.scaleSet.id)) setTimeout(hook, 0);
        return arm.writeInstanceNics(r, b, n, o);
      }),
      getVm: guard((r) => arm.getVm(r)),
      listVms: guard((s) => arm.listVms(s)),
    };
    p.services = createServices(config, {
      clock,
      compute,
      log: countingLogger(
        counters,
        appErrors,
        this.run.writes,
        simClock.now,
        () => p.id,
        this.run.requestOfMessage,
        (r, w) => this.run.note(r, w),
      ),
      random: prng(opts.seed * 31 + p.id),
      timeScale: T,
    });
    // Trace the timer's removal of a finished absent's row (the row is gone: an older declaration arriving later
    // finds none to lose to).
    const declarations = p.services.declarations;
    const remove = declarations.remove.bind(declarations);
    declarations.remove = async (target, d) => {
      const removed = await remove(target, d);
      this.run.note(
        d.requestId,
        `host ${p.id} timer removed its row (finished absent): ${removed ? "removed" : "not removed (changed or gone)"}`,
      );
      return removed;
    };
    return p;
  }
}
