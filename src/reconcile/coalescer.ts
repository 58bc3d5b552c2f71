/**
 * Joins reconciles of the same scale set within one process: at most one running and one waiting per key.
 * Every request that arrives while one runs joins the single waiting one, which reads the declarations only
 * when it starts, so it sees all of them. Across processes the ETag keeps things correct; this keeps them cheap.
 */
export class Coalescer<T> {
  private readonly running = new Map<string, Promise<T>>();
  private readonly waiting = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const queued = this.waiting.get(key);
    if (queued) return queued;
    const current = this.running.get(key);
    if (!current) return this.start(key, work);
    const next = current
      .catch(() => undefined)
      .then(() => {
        this.waiting.delete(key);
        return this.start(key, work);
      });
    this.waiting.set(key, next);
    return next;
  }

  private start(key: string, work: () => Promise<T>): Promise<T> {
    const p = (async () => {
      try {
        return await work();
      } finally {
        this.running.delete(key);
      }
    })();
    this.running.set(key, p);
    return p;
  }

  /** Resolves when nothing runs or waits: for draining at shutdown. */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.waiting.size > 0) {
      await Promise.allSettled([...this.running.values(), ...this.waiting.values()]);
    }
  }
}
