/**
 * Counts invocations in progress so `stop()` can drain them: triggers stop taking new work first, then wait here
 * until every started invocation has finished, as the host does on shutdown (listeners stop, in-flight complete).
 */
export class InFlight {
  #running = new Set<Promise<unknown>>();

  get size(): number {
    return this.#running.size;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    const p = work();
    const tracked = p.then(
      () => undefined,
      () => undefined,
    );
    this.#running.add(tracked);
    void tracked.finally(() => this.#running.delete(tracked));
    return p;
  }

  async drain(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }
}

/** A sleep that `abort()` cuts short, so stopping a poller or timer does not wait out its interval. */
export class Sleeper {
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #aborted = false;

  get aborted(): boolean {
    return this.#aborted;
  }

  sleep(ms: number): Promise<void> {
    if (this.#aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(resolve, Math.max(0, ms));
    });
  }

  abort(): void {
    this.#aborted = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#wake?.();
  }
}
