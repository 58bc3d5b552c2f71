// The benchmark's poolsync instances as OS processes (bench/hostProcess.ts each), as Flex Consumption runs them: each
// its own coalescer, pacers, queue listener, memory and event loop, all over the same tables, queue and simulator.
// Instances can be added while a workload runs and SIGKILLed while they hold messages (their messages come back when
// their lease runs out and another instance finishes them).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { awaitReady, entryBeside, forkInstance, type InstanceProcess } from "../devkit/instanceProcess";
import type { FromHost, HostBatch, HostCall, HostStart, LogRecord, ToHost } from "./hostProcess";

export interface HostProcessesOptions {
  start: Omit<HostStart, "kind" | "randomSeed">;
  /** Instance i gets randomSeed + i. */
  randomSeed: number;
  onBatch: (b: HostBatch) => void;
  /** The instances' own output (stack traces, warnings), one line at a time. */
  out: (line: string) => void;
  readyTimeoutMs?: number;
  /**
   * Which hostProcess the instances run when this code runs from source: "source" (under tsx, the default) or
   * "built" (dist/bench/hostProcess.js: less than half the CPU to start, bench/RESULTS.md "Issue 42: 1 to 50
   * instances from built JavaScript"; buildHostEntry() builds it first). Run from dist/, they run the built one.
   */
  entry?: HostEntry;
  /** Settings on top of this process's environment (NODE_COMPILE_CACHE, say). */
  env?: Record<string, string>;
  /**
   * At most this many instances starting at once (default: no limit): the next is forked when one is ready, so a
   * scale-out of many does not start them all on the same cores together.
   */
  maxStarting?: number;
}

export type HostEntry = "source" | "built";

const REPO_ROOT = join(__dirname, "..");

/**
 * The instance's entry file and Node flags: the `.ts` one under tsx, or the one `npm run build` emits (from dist/,
 * always the built one beside this file).
 */
export function hostEntry(kind: HostEntry): { file: string; execArgv: string[] } {
  if (!__filename.endsWith(".ts")) return entryBeside(__dirname, "hostProcess", false);
  return kind === "source"
    ? entryBeside(__dirname, "hostProcess", true)
    : entryBeside(join(REPO_ROOT, "dist", "bench"), "hostProcess", false);
}

/**
 * Brings dist/ up to date with the source (`tsc -b`, as `npm run build`; nothing to do in about a second when it is),
 * so that "built" instances run the code of this tree and not an older build's.
 */
export function buildHostEntry(): void {
  if (!__filename.endsWith(".ts")) return;
  execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-b", REPO_ROOT], { stdio: "inherit" });
}

/** Distributive: each call kind without its id. */
type CallBody<T> = T extends { id: number } ? Omit<T, "id"> : never;

export interface HostInstance {
  index: number;
  pid: number;
  /** Messages it held at its last batch. */
  inflight: number;
  /** Resident memory at its start and at its last status (bytes). */
  rssBytes: number;
  killed: boolean;
  /** Its services are up and it takes calls (a call before would go unheard). */
  ready: boolean;
  /** Date.now() at its fork, and at its ready message (undefined until then). */
  forkedAt: number;
  readyAt?: number;
  /** Real ms from its fork to its ready message. */
  startMs?: number;
  /** CPU ms (user + system, every thread of it) it had used when it was ready. */
  startCpuMs?: number;
  process: InstanceProcess<ToHost, FromHost>;
}

export class HostProcesses {
  readonly all: HostInstance[] = [];
  /** Kills made: when, and how many messages the instance held at its last batch. */
  readonly kills: Array<{ index: number; atMs: number; heldMessages: number }> = [];
  #callId = 0;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; host: number }>();
  #next = 0;
  #starting = 0;
  readonly #waitingToStart: Array<() => void> = [];

  constructor(private readonly opts: HostProcessesOptions) {}

  /** The instances started, neither killed nor exited. */
  get alive(): HostInstance[] {
    return this.all.filter((h) => h.ready && !h.killed && !h.process.gone());
  }

  /** Starts `count` more instances at once, resolving when each has its services ready. */
  async add(count = 1): Promise<HostInstance[]> {
    return Promise.all(Array.from({ length: count }, () => this.#startOne()));
  }

  async #startOne(): Promise<HostInstance> {
    if (this.#starting >= (this.opts.maxStarting ?? Infinity))
      await new Promise<void>((resolve) => this.#waitingToStart.push(resolve));
    this.#starting++;
    try {
      return await this.#forkOne();
    } finally {
      this.#starting--;
      this.#waitingToStart.shift()?.();
    }
  }

  async #forkOne(): Promise<HostInstance> {
    const index = this.all.length;
    const forkedAt = Date.now();
    const process = forkInstance<ToHost, FromHost>({
      entry: hostEntry(this.opts.entry ?? "source"),
      prefix: `[host ${index}] `,
      out: this.opts.out,
      ...(this.opts.env ? { env: { ...globalThis.process.env, ...this.opts.env } } : {}),
    });
    const h: HostInstance = {
      index,
      pid: process.pid,
      inflight: 0,
      rssBytes: 0,
      killed: false,
      ready: false,
      forkedAt,
      process,
    };
    this.all.push(h);
    process.onMessage((m) => {
      if (m.kind === "batch") {
        h.inflight = m.inflight;
        this.opts.onBatch(m);
      } else if (m.kind === "reply") {
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        if (m.error !== undefined) p?.reject(new Error(m.error));
        else p?.resolve(m.value);
      }
    });
    void process.exited.then(() => {
      for (const [id, p] of this.#pending)
        if (p.host === index) {
          this.#pending.delete(id);
          p.reject(new Error(`host ${index} exited`));
        }
    });
    const ready = awaitReady<ToHost, FromHost, { rssBytes: number; cpuMs: number }>(
      process,
      `bench host ${index}`,
      this.opts.readyTimeoutMs ?? 120_000,
      (m) => (m.kind === "ready" ? { ready: m } : m.kind === "failed" ? { failed: m.error } : undefined),
    );
    process.send({ kind: "start", ...this.opts.start, randomSeed: this.opts.randomSeed + index });
    const r = await ready;
    h.rssBytes = r.rssBytes;
    h.readyAt = Date.now();
    h.startMs = h.readyAt - forkedAt;
    h.startCpuMs = r.cpuMs;
    h.ready = true;
    return h;
  }

  /** Asks one instance; rejects if it dies first. */
  call<T>(h: HostInstance, body: CallBody<HostCall>): Promise<T> {
    const id = ++this.#callId;
    return new Promise<T>((resolve, reject) => {
      if (h.killed || h.process.gone()) return reject(new Error(`host ${h.index} is gone`));
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, host: h.index });
      h.process.send({ ...body, id } as HostCall);
    });
  }

  /** The next live instance in turn (Event Grid spreads deliveries over the instances). */
  nextAlive(): HostInstance | undefined {
    const alive = this.alive;
    return alive.length === 0 ? undefined : alive[this.#next++ % alive.length];
  }

  /**
   * SIGKILLs one live instance that holds messages now (mid-invocation), waiting up to `waitMs` for one to; undefined
   * when none did.
   */
  async killOneHolding(t0: number, waitMs = 60_000): Promise<HostInstance | undefined> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const holding = this.alive.filter((h) => h.inflight > 0).sort((a, b) => b.inflight - a.inflight);
      const victim = holding[0];
      if (victim) {
        victim.killed = true;
        victim.process.kill();
        this.kills.push({ index: victim.index, atMs: Date.now() - t0, heldMessages: victim.inflight });
        return victim;
      }
      if (Date.now() > deadline) return undefined;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Every live instance's messages in hand and memory, as they answer now. */
  async status(): Promise<Array<{ inflight: number; rssBytes: number }>> {
    return Promise.all(
      this.alive.map((h) =>
        this.call<{ inflight: number; rssBytes: number }>(h, { kind: "status" }).then(
          (s) => {
            h.inflight = s.inflight;
            h.rssBytes = s.rssBytes;
            return s;
          },
          () => ({ inflight: 0, rssBytes: 0 }),
        ),
      ),
    );
  }

  async coalescersIdle(): Promise<void> {
    await Promise.all(this.alive.map((h) => this.call(h, { kind: "coalescerIdle" }).catch(() => undefined)));
  }

  /**
   * Stops every live instance (no more polls; what it holds gets `drainMs` to finish) and waits for them to exit;
   * what was still held then is counted.
   */
  async stop(drainMs: number): Promise<{ abandoned: number; rssBytes: number[] }> {
    const answers = await Promise.all(
      this.alive.map(async (h) => {
        const r = await this.call<{ abandoned: number; rssBytes: number }>(h, { kind: "stop", drainMs }).catch(() => ({
          abandoned: h.inflight,
          rssBytes: h.rssBytes,
        }));
        h.rssBytes = r.rssBytes;
        const timer = setTimeout(() => h.process.kill(), 10_000);
        await h.process.exited;
        clearTimeout(timer);
        return r;
      }),
    );
    for (const h of this.all) h.process.kill();
    return { abandoned: answers.reduce((n, a) => n + a.abandoned, 0), rssBytes: this.all.map((h) => h.rssBytes) };
  }
}

export type { LogRecord };
