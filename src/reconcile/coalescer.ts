/**
 * Joins reconciles of the same scale set within one process: at most one running and one pending per key.
 * A pending reconcile has not read the declarations yet, so every request that arrives meanwhile joins it and
 * is covered by it; the requests' inputs are merged (`merge`), so no joiner's wish (say, "read ARM, not the
 * cache") is lost. A fresh one gathers for `gatherMs` first, so declarations delivered together make one write,
 * unless its caller says it must start at once (`gather: false`): then only what arrives while it runs shares the next.
 * Across processes the ETag keeps things correct; this keeps them cheap.
 */
export class Coalescer<I, T> {
  private readonly running = new Map<string, Promise<T>>();
  private readonly pending = new Map<string, { input: I; result: Promise<T> }>();

  constructor(
    private readonly merge: (a: I, b: I) => I,
    private readonly gatherMs = 0,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  run(key: string, input: I, work: (input: I) => Promise<T>, opts: { gather?: boolean } = {}): Promise<T> {
    const queued = this.pending.get(key);
    if (queued) {
      queued.input = this.merge(queued.input, input);
      return queued.result;
    }
    const current = this.running.get(key);
    const gather = opts.gather !== false;
    const before = current
      ? current.then(noop, noop)
      : this.gatherMs > 0 && gather
        ? this.sleep(this.gatherMs)
        : Promise.resolve();
    const entry = { input, result: undefined as unknown as Promise<T> };
    entry.result = before.then(() => {
      this.pending.delete(key);
      return this.start(key, () => work(entry.input));
    });
    this.pending.set(key, entry);
    return entry.result;
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

  /** A reconcile of `key` runs or waits to run in this process. */
  busy(key: string): boolean {
    return this.running.has(key) || this.pending.has(key);
  }

  /** Resolves when nothing runs or waits: for draining at shutdown. */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.pending.size > 0) {
      await Promise.allSettled([...this.running.values(), ...[...this.pending.values()].map((p) => p.result)]);
    }
  }
}

const noop = () => undefined;
