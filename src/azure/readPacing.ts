import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { ThrottledError } from "../core/errors";
import type { Clock } from "../core/ports";
import { emptyUntil, READ_BUDGET, refill, take, waitForToken, type BucketState } from "../core/tokenBucket";
import { retryAfterMs } from "./armErrors";

/**
 * Keeps this process's ARM reads (GETs, LISTs and operation polls alike) inside ARM's per-subscription read
 * bucket: a read waits for its token rather than earn a 429. A 429 that comes anyway (other clients share the
 * bucket) closes it until Retry-After. A wait longer than `maxWaitMs` is not slept out inside the invocation: the
 * read fails at once as throttled, with the wait as its Retry-After, so the reconcile re-enqueues itself (and the
 * timer records when to come back). A wait is abandoned as soon as the request is aborted (its timeout).
 */
export class ReadPacer {
  private readonly states = new Map<string, BucketState>();

  constructor(
    private readonly clock: Clock,
    private readonly maxWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  private state(sub: string): BucketState {
    return this.states.get(sub) ?? { tokens: READ_BUDGET.capacity, at: this.clock.now() };
  }

  async acquire(sub: string, signal?: AbortSignalLike): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw aborted();
      const wait = waitForToken(READ_BUDGET, this.state(sub), this.clock.now());
      if (wait === 0) break;
      if (wait > this.maxWaitMs) {
        throw new ThrottledError(
          `reads of subscription ${sub} are paced for ${Math.ceil(wait / 1000)} s (ARM's read budget, or an earlier 429's Retry-After)`,
          wait,
        );
      }
      await untilAborted(this.clock.sleep(wait), signal);
    }
    this.states.set(sub, take(READ_BUDGET, this.state(sub), this.clock.now()));
  }

  /** ARM's own count of the subscription's reads left (every host's reads in it): plan on no more than that. */
  learnRemaining(sub: string, remaining: number): void {
    const now = this.clock.now();
    const s = refill(READ_BUDGET, this.state(sub), now);
    // Below zero is kept (down to a whole bucket): every host reads the same figure and waits for its share of the refill.
    if (s.at <= now && remaining < s.tokens) this.states.set(sub, { tokens: Math.max(-READ_BUDGET.capacity, remaining), at: s.at });
  }

  throttled(sub: string, retryAfter: number): void {
    this.states.set(sub, emptyUntil(this.clock.now() + retryAfter));
  }

  /** The pipeline policy: every GET to a subscription's resources goes through its bucket. */
  policy(): PipelinePolicy {
    return {
      name: "poolsyncReadPacing",
      sendRequest: async (request, next) => {
        const sub = request.method === "GET" ? /\/subscriptions\/([^/?]+)/i.exec(new URL(request.url).pathname)?.[1]?.toLowerCase() : undefined;
        if (!sub) return next(request);
        await this.acquire(sub, request.abortSignal);
        const response = await next(request);
        if (response.status === 429) this.throttled(sub, retryAfterMs(response.headers.get("retry-after"), 60_000));
        return response;
      },
    };
  }
}

/** What the pipeline hands over as a request's abort signal. */
interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** The sleep, or the abort's reason as soon as the signal fires (the sleep's timer then runs out unobserved). */
const aborted = () => new DOMException("The read was aborted while it waited for ARM's read budget.", "AbortError");

function untilAborted(sleep: Promise<void>, signal: AbortSignalLike | undefined): Promise<void> {
  if (!signal) return sleep;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    sleep.then(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
