import { seededRandom } from "../../sim/random";
import { planDelivery, retryWithinTtlMs, type EventGridDeliveryOptions } from "./eventGridDelivery";

/**
 * Plays Event Grid between the simulator and the runtime: every ARM system event the simulator publishes is POSTed,
 * after a delay, to each Event Grid function's webhook (`aeg-event-type: Notification`, an Event Grid schema
 * array of one event, as a subscription with maxEventsPerBatch 1 delivers). A delivery answered with anything but
 * 2xx is retried a few times with a growing delay, as Event Grid retries; one that still fails is reported.
 *
 * With `eventGrid` set, it delivers as Event Grid really does (eventGridDelivery.ts), seeded: at least once, not in
 * order, some events twice, some hours late on Event Grid's retry schedule, in simulated time divided by the
 * simulator's time scale; a webhook's failure is retried on that schedule too, up to the event's time to live.
 */

export interface ForwarderStats {
  /** Events the simulator published. */
  published: number;
  /** Deliveries (event × function) answered 2xx, and those given up on. */
  delivered: number;
  failed: number;
  pending: number;
}

export interface EventGridMode extends EventGridDeliveryOptions {
  /** Seed of the PRNG that plans every delivery (in the order events are published). */
  seed: number;
  /** Simulated seconds per real second of the simulator whose events these are (default 1). */
  timeScale?: number;
}

export interface EventForwarderOptions {
  delayMs: number;
  /** Deliver as Event Grid does (see above) instead of once each after `delayMs`. */
  eventGrid?: EventGridMode;
  /** Delays before each retry; Event Grid's own schedule starts at 10 s, far too slow for a laptop. */
  retryDelaysMs?: readonly number[];
  onError?: (message: string) => void;
  fetchImpl?: typeof fetch;
}

export class EventForwarder {
  readonly #o: Required<Omit<EventForwarderOptions, "onError" | "eventGrid">> & { onError: (m: string) => void };
  readonly #eventGrid: (EventGridMode & { rand: () => number; scale: number }) | undefined;
  #targets: string[] | undefined;
  /**
   * Several hosts: each event goes to one of them (round robin), as Event Grid delivers to one instance behind the
   * app's endpoint.
   */
  #hosts: string[][] | undefined;
  #nextHost = 0;
  readonly #waiting: unknown[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #posting = new Set<Promise<void>>();
  #stopped = false;
  readonly #stats: ForwarderStats = { published: 0, delivered: 0, failed: 0, pending: 0 };

  constructor(options: EventForwarderOptions) {
    this.#o = {
      delayMs: options.delayMs,
      retryDelaysMs: options.retryDelaysMs ?? [500, 1000, 2000],
      onError: options.onError ?? ((m) => console.error(m)),
      fetchImpl: options.fetchImpl ?? fetch,
    };
    const eg = options.eventGrid;
    this.#eventGrid = eg && { ...eg, rand: seededRandom(eg.seed), scale: eg.timeScale ?? 1 };
  }

  get stats(): ForwarderStats {
    return { ...this.#stats, pending: this.#timers.size + this.#posting.size + this.#waiting.length };
  }

  /** Where events go: one webhook URL per Event Grid function. Events published before this are held, then sent. */
  setTargets(urls: readonly string[]): void {
    this.#targets = [...urls];
    for (const e of this.#waiting.splice(0)) this.#fanOut(e);
  }

  /**
   * Several hosts, each with its webhook URLs (one per Event Grid function, in the same order on every host): each
   * delivery, retries included, goes to the next host in turn, so a host that is down costs a retry, not the event.
   */
  setHostTargets(perHost: readonly (readonly string[])[]): void {
    this.#hosts = perHost.map((urls) => [...urls]);
    this.setTargets((perHost[0] ?? []).map((_, fn) => fnTarget(fn)));
  }

  #resolve(target: string): string {
    const fn = fnIndex(target);
    if (fn === undefined || !this.#hosts?.length) return target;
    const host = this.#hosts[this.#nextHost++ % this.#hosts.length] as string[];
    return host[fn] ?? target;
  }

  publish(event: unknown): void {
    if (this.#stopped) return;
    this.#stats.published++;
    if (this.#targets === undefined) this.#waiting.push(event);
    else this.#fanOut(event);
  }

  #fanOut(event: unknown): void {
    for (const url of this.#targets ?? []) {
      const eg = this.#eventGrid;
      if (!eg) {
        this.#schedule(event, url, this.#o.delayMs, 0);
        continue;
      }
      // Each subscription delivers on its own: its own plan, the same PRNG (so a seed replays the whole run).
      const plan = planDelivery(eg.rand, eg);
      for (const at of plan.receivedAtMs) this.#schedule(event, url, at / eg.scale, 0);
    }
  }

  /** Resolves once nothing is scheduled or in flight (or the deadline passes: false). */
  async idle(timeoutMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.stats.pending > 0) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 20));
    }
    return true;
  }

  /** Drops what is not yet sent (returns how many), and waits for the POSTs already on the wire. */
  async stop(): Promise<number> {
    this.#stopped = true;
    const dropped = this.#timers.size + this.#waiting.length;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#waiting.length = 0;
    await Promise.all([...this.#posting]);
    return dropped;
  }

  #schedule(event: unknown, url: string, delayMs: number, attempt: number): void {
    if (this.#stopped) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const p = this.#deliver(event, url, attempt).finally(() => this.#posting.delete(p));
      this.#posting.add(p);
    }, delayMs);
    this.#timers.add(timer);
  }

  async #deliver(event: unknown, url: string, attempt: number): Promise<void> {
    const failure = await this.#post(this.#resolve(url), event);
    if (failure === undefined) {
      this.#stats.delivered++;
      return;
    }
    const eg = this.#eventGrid;
    // Event Grid retries a delivery the webhook refused on its own schedule; else a few quick retries.
    const egRetry = eg && retryWithinTtlMs(attempt);
    const retryIn = eg ? (egRetry === undefined ? undefined : egRetry / eg.scale) : this.#o.retryDelaysMs[attempt];
    const id = (event as { id?: unknown })?.id;
    if (retryIn !== undefined && !this.#stopped) {
      this.#o.onError(`Event ${String(id)}: ${failure}; retrying in ${retryIn} ms`);
      this.#schedule(event, url, retryIn, attempt + 1);
    } else {
      this.#stats.failed++;
      this.#o.onError(`Event ${String(id)}: ${failure}; giving up after ${attempt + 1} deliveries`);
    }
  }

  /** undefined on success, else why it failed. */
  async #post(url: string, event: unknown): Promise<string | undefined> {
    try {
      const res = await this.#o.fetchImpl(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "aeg-event-type": "Notification",
          "aeg-subscription-name": "POOLSYNC-LOCAL",
        },
        body: JSON.stringify([event]),
      });
      const text = await res.text();
      return res.ok ? undefined : `${url} answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`;
    } catch (err) {
      return `${url}: ${(err as Error).message}`;
    }
  }
}

const FN_TARGET = "function:";
const fnTarget = (fn: number) => `${FN_TARGET}${fn}`;
const fnIndex = (target: string) => (target.startsWith(FN_TARGET) ? Number(target.slice(FN_TARGET.length)) : undefined);
