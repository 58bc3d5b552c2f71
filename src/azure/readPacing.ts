import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import type { Clock } from "../core/ports";
import { emptyUntil, READ_BUDGET, refill, take, waitForToken, type BucketState } from "../core/tokenBucket";
import { retryAfterMs } from "./armErrors";

/**
 * Keeps this process's ARM reads (GETs, LISTs and operation polls alike) inside ARM's per-subscription read
 * bucket: a read waits for its token rather than earn a 429. A 429 that comes anyway (other clients share the
 * bucket) closes it until Retry-After. Reads are never refused, only delayed; the request's own timeout bounds it.
 */
export class ReadPacer {
  private readonly states = new Map<string, BucketState>();

  constructor(private readonly clock: Clock) {}

  private state(sub: string): BucketState {
    return this.states.get(sub) ?? { tokens: READ_BUDGET.capacity, at: this.clock.now() };
  }

  async acquire(sub: string): Promise<void> {
    for (;;) {
      const wait = waitForToken(READ_BUDGET, this.state(sub), this.clock.now());
      if (wait === 0) break;
      await this.clock.sleep(wait);
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
        await this.acquire(sub);
        const response = await next(request);
        if (response.status === 429) this.throttled(sub, retryAfterMs(response.headers.get("retry-after"), 60_000));
        return response;
      },
    };
  }
}
