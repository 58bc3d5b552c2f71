/**
 * How many ARM events one process handles at once. The Event Grid extension invokes the function once per event of a
 * batch, all at the same time (single dispatch: Task.WhenAll over the batch), and a batch holds up to 5,000 events.
 * Each handling makes a few Table round trips one after another; started together, a thousand of them put thousands
 * of requests in front of storage at once, every request's timeout (POOLSYNC_TABLE_TIMEOUT_SECONDS) running while it
 * waits its turn, and the requests at the back timed out: their invocations failed, the whole batch answered 500,
 * and Event Grid re-sent all of it. Taken a few at a time, each request waits only for the few before it, and the
 * batch ends as soon as storage can serve it, which the unbounded rush never made faster.
 */
export const EVENTS_AT_ONCE = 32;

/** A first-come, first-served limit on work in flight; waiting work holds no storage request and no timer. */
export class Gate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line, so a newcomer can never overtake the queue.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** The process's gate for onResourceEvent. */
export const eventGate = new Gate(EVENTS_AT_ONCE);
