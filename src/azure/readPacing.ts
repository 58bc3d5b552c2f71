import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { ThrottledError } from "../core/errors";
import type { Clock } from "../core/ports";
import { emptyUntil, READ_BUDGET, refill, take, waitForToken, type BucketState } from "../core/tokenBucket";
import { retryAfterMs } from "./armErrors";

/**
 * Keeps this process's ARM reads (GETs, LISTs and operation polls alike) inside ARM's per-subscription read
 * bucket: a read waits for its token rather than earn a 429. A 429 that comes anyway (other clients share the
 * bucket) closes what it names until Retry-After: a CRP 429 names its policies (`details[].target`, e.g.
 * `GetVMScaleSet3Min`, `HighCostGetVMScaleSet30Min`), and then closes only reads of the same kind (method and path with
 * the names left out), or of the same resource for a `…Resource` policy; a 429 naming none (ARM's own subscription
 * bucket) closes every read of the subscription. A wait longer than `maxWaitMs` is not slept out inside the invocation:
 * the read fails at once as throttled, with the wait as its Retry-After, so the reconcile re-enqueues itself (and the
 * timer records when to come back). A wait is abandoned as soon as the request is aborted (its timeout).
 */
export class ReadPacer {
  private readonly states = new Map<string, BucketState>();
  /** Reads a named CRP bucket closed: key (readKey) → until when. */
  private readonly closed = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly maxWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  private state(sub: string): BucketState {
    return this.states.get(sub) ?? { tokens: READ_BUDGET.capacity, at: this.clock.now() };
  }

  async acquire(sub: string, signal?: AbortSignalLike, path?: string): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw aborted();
      const now = this.clock.now();
      const wait = Math.max(
        waitForToken(READ_BUDGET, this.state(sub), now),
        path === undefined ? 0 : this.closedFor(path, now),
      );
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
    // Below zero is kept (down to a whole bucket): every host reads the same figure and waits for its share of the
    // refill.
    if (s.at <= now && remaining < s.tokens)
      this.states.set(sub, { tokens: Math.max(-READ_BUDGET.capacity, remaining), at: s.at });
  }

  throttled(sub: string, retryAfter: number): void {
    this.states.set(sub, emptyUntil(this.clock.now() + retryAfter));
  }

  /** A 429 that named CRP's buckets: reads like `path` (or of its very resource, for per-resource buckets) wait. */
  throttledBucket(path: string, buckets: string[], retryAfter: number): void {
    const key = buckets.every((b) => /Resource$/i.test(b)) ? resourceKey(path) : shapeKey(path);
    this.closed.set(key, Math.max(this.closed.get(key) ?? 0, this.clock.now() + retryAfter));
  }

  private closedFor(path: string, now: number): number {
    let wait = 0;
    for (const key of [resourceKey(path), shapeKey(path)]) {
      const until = this.closed.get(key);
      if (until === undefined) continue;
      if (until <= now) this.closed.delete(key);
      else wait = Math.max(wait, until - now);
    }
    return wait;
  }

  /** The pipeline policy: every GET to a subscription's resources goes through its bucket. */
  policy(): PipelinePolicy {
    return {
      name: "poolsyncReadPacing",
      sendRequest: async (request, next) => {
        const path = new URL(request.url).pathname;
        const sub = request.method === "GET" ? /\/subscriptions\/([^/?]+)/i.exec(path)?.[1]?.toLowerCase() : undefined;
        if (!sub) return next(request);
        await this.acquire(sub, request.abortSignal, path);
        const response = await next(request);
        if (response.status === 429) {
          const wait = retryAfterMs(response.headers.get("retry-after"), 60_000);
          const buckets = namedBuckets(response.bodyAsText);
          if (buckets.length > 0) this.throttledBucket(path, buckets, wait);
          else this.throttled(sub, wait);
        }
        return response;
      },
    };
  }
}

/** The resource a read is about, as one key (case-insensitive, as ARM's paths are). */
const resourceKey = (path: string) => `resource:${decodeURIComponent(path).toLowerCase().replace(/\/+$/, "")}`;

/** The kind of read: its path with every name left out (`/subscriptions/*\/resourcegroups/*\/providers/…/*`). */
function shapeKey(path: string): string {
  const segments = decodeURIComponent(path).toLowerCase().replace(/\/+$/, "").split("/");
  // Segments alternate collection / name after the leading "" ; "providers" is followed by a namespace, not a name.
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i]!;
    out.push(s);
    if (s === "providers" && i + 1 < segments.length) out.push(segments[++i]!);
    else if (i + 1 < segments.length) {
      out.push("*");
      i++;
    }
  }
  return `shape:/${out.join("/")}`;
}

/** CRP's policy names in a 429's body (top-level or under `error`), `details[].target`; none for ARM's own 429. */
export function namedBuckets(body: string | null | undefined): string[] {
  if (!body) return [];
  try {
    const parsed = JSON.parse(body) as { details?: unknown; error?: { details?: unknown } };
    const details = Array.isArray(parsed.details)
      ? parsed.details
      : Array.isArray(parsed.error?.details)
        ? parsed.error.details
        : [];
    return details
      .map((d: unknown) => (d as { target?: unknown }).target)
      .filter((t): t is string => typeof t === "string" && /^[A-Za-z0-9./]{1,128}$/.test(t))
      .slice(0, 16);
  } catch {
    return [];
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
