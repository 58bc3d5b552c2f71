import { AsyncLocalStorage } from "node:async_hooks";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import {
  BACKGROUND_SHARE,
  CRP_PER_RESOURCE,
  CRP_PER_SUBSCRIPTION,
  CRP_WINDOWS,
  knownPolicy,
  NRP_WINDOWS,
  plannable,
  splitPolicyName,
  type CrpReadPolicy,
} from "../core/armBudgets";
import { OWN_PACING, ThrottledError } from "../core/errors";
import type { Clock } from "../core/ports";
import { SlidingWindow, type WindowSpec } from "../core/slidingWindow";
import {
  emptyUntil,
  POLL_RESERVE,
  READ_BUDGET,
  refill,
  take,
  waitForToken,
  waitForTokens,
  type BucketSpec,
  type BucketState,
} from "../core/tokenBucket";
import { retryAfterMs } from "./armErrors";
import { readChargeOf, type ReadCharge } from "./readCharges";
import { parseRemainingResource } from "./rateLimitHeaders";

/**
 * Keeps this process's ARM reads (GETs, LISTs and operation polls alike) inside every budget they are charged to, so
 * that a read waits for its turn rather than earn a 429:
 * - ARM's read bucket of the subscription and principal (250, then 25 a second);
 * - CRP's windows per subscription (`GetVMScaleSet3Min`/`30Min` for a scale set GET, `HighCostGetVMScaleSet…` for
 *   every LIST of scale sets, instances or VMs, …), counted as sliding windows (core/slidingWindow.ts), and CRP's
 *   bucket of each resource (`…Resource`);
 * - NRP's 10,000 reads every 5 minutes per subscription (NICs, load balancers, a scale set's NICs).
 * Operation polls leave the last POLL_RESERVE tokens of ARM's read bucket to every other read (core/tokenBucket.ts).
 * What the answers say is left (`x-ms-ratelimit-remaining-subscription-reads`, `x-ms-ratelimit-remaining-resource`)
 * counts every host's reads: the pacer plans on no more. NRP says nothing; ARM's bucket, which every NRP read also
 * spends, refills 7,750 in five minutes, below NRP's 10,000, so the hosts of one principal stay inside NRP's together.
 *
 * A read made in `background` (the timer's refresh) may spend only half of each CRP window: the rest stays for the
 * reconciles, which read what they are about to write.
 *
 * A 429 that comes anyway (other clients share the buckets) closes what it names until Retry-After: a CRP 429 names
 * its policies (`details[].target`), and then closes only reads of the same kind in the same subscription (method and
 * path with the names but the subscription's left out), or of the same resource for a `…Resource` policy; a 429
 * naming none (ARM's own subscription bucket) closes every read of the subscription. A wait longer than `maxWaitMs`
 * is not slept out inside the invocation: the read fails at once as throttled, with the wait as its Retry-After, so
 * the reconcile re-enqueues itself (and the timer pauses that subscription until then). A wait is abandoned, the same
 * way, as soon as the request is aborted (its timeout).
 */
export class ReadPacer {
  private readonly states = new Map<string, BucketState>();
  /** Reads a named CRP bucket closed: key (readKey) → until when. */
  private readonly closed = new Map<string, number>();
  /** CRP's and NRP's windows by `sub|name` (`GetVMScaleSet3Min`, `nrpReads`). */
  private readonly windows = new Map<string, SlidingWindow>();
  /** CRP's per-resource and per-minute subscription buckets by `policy|scope|key`. */
  private readonly buckets = new Map<string, BucketState & { spec: BucketSpec }>();
  private readonly background_ = new AsyncLocalStorage<true>();
  private takes = 0;
  /** The slowest of the recent requests, decaying (see latenessMs). */
  private late = 0;

  constructor(
    private readonly clock: Clock,
    private readonly maxWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * How long a request takes on this clock lately (the slowest of the recent ones): a window counts each request that
   * much longer, since the server may count it that much later than we did. Milliseconds on a real clock; on the
   * benchmark's time-scaled one, each real one is many.
   */
  latenessMs(): number {
    return this.late;
  }

  /** One request's round trip on this clock (the write pacer's are measured at the edge and reported here too). */
  observeRoundTrip(ms: number): void {
    this.late = Math.max(ms, this.late * 0.98);
  }

  /** Runs `work` as background reading: its reads spend at most BACKGROUND_SHARE of each CRP window. */
  background<T>(work: () => Promise<T>): Promise<T> {
    return this.background_.run(true, work);
  }

  private state(sub: string): BucketState {
    return this.states.get(sub) ?? { tokens: READ_BUDGET.capacity, at: this.clock.now() };
  }

  private window(sub: string, name: string, spec: WindowSpec): SlidingWindow {
    const key = `${sub}|${name}`;
    let w = this.windows.get(key);
    if (!w) {
      w = new SlidingWindow(spec);
      this.windows.set(key, w);
    }
    w.setLateness(this.late);
    return w;
  }

  /** Every window a read of this charge counts in, with what it may plan on of it. */
  private windowsOf(c: ReadCharge): Array<{ name: string; w: SlidingWindow; limit: number }> {
    const background = this.background_.getStore() === true;
    const out: Array<{ name: string; w: SlidingWindow; limit: number }> = [];
    if (c.crp) {
      for (const [suffix, spec] of Object.entries(CRP_WINDOWS[c.crp])) {
        const limit = background ? Math.floor(spec.size * BACKGROUND_SHARE) : plannable(spec);
        out.push({ name: `${c.crp}${suffix}`, w: this.window(c.subscriptionId, `${c.crp}${suffix}`, spec), limit });
      }
    }
    if (c.nrp) {
      const spec = NRP_WINDOWS.reads;
      out.push({ name: "Network reads", w: this.window(c.subscriptionId, "nrpReads", spec), limit: plannable(spec) });
    }
    return out;
  }

  /** CRP's per-resource and per-minute subscription buckets a read of this charge takes a token from. */
  private bucketsOf(c: ReadCharge): Array<{ name: string; key: string; spec: BucketSpec }> {
    const out: Array<{ name: string; key: string; spec: BucketSpec }> = [];
    if (!c.crp) return out;
    const own = CRP_PER_RESOURCE[c.crp];
    if (own && c.resource) out.push({ name: `${c.crp}Resource`, key: `${c.crp}|resource|${c.resource}`, spec: own });
    const sub = CRP_PER_SUBSCRIPTION[c.crp];
    if (sub) out.push({ name: `${c.crp}SubscriptionMaximum`, key: `${c.crp}|sub|${c.subscriptionId}`, spec: sub });
    return out;
  }

  private bucket(key: string, spec: BucketSpec): BucketState {
    return this.buckets.get(key) ?? { tokens: spec.capacity, at: this.clock.now() };
  }

  /** The longest wait any budget of this read asks for, and which budget that is. */
  private waitFor(sub: string, path: string | undefined, now: number): { ms: number; why: string } {
    const c = path === undefined ? undefined : readChargeOf(path);
    const poll = c?.crp === "GetOperation";
    let ms = waitForTokens(READ_BUDGET, this.state(sub), now, poll ? 1 + POLL_RESERVE : 1);
    let why = poll ? "ARM's read budget, kept for reads other than polls" : "ARM's read budget";
    const more = (wait: number, name: string) => {
      if (wait > ms) {
        ms = wait;
        why = name;
      }
    };
    if (path === undefined) return { ms, why };
    more(this.closedFor(path, now, c?.nrp ? sub : undefined), "an earlier 429's Retry-After");
    if (!c) return { ms, why };
    for (const { name, w, limit } of this.windowsOf(c)) more(w.waitMs(now, 1, limit), `the ${name} window`);
    for (const { name, key, spec } of this.bucketsOf(c)) more(waitForToken(spec, this.bucket(key, spec), now), name);
    return { ms, why };
  }

  async acquire(sub: string, signal?: AbortSignalLike, path?: string): Promise<void> {
    for (let slept = false; ; slept = true) {
      const wait = this.waitFor(sub, path, this.clock.now());
      // Past the deadline after a wait of ours, the request is ours to give back even when the budget just freed:
      // sent, it would only come back "already canceled", as a failure.
      if (signal?.aborted && (slept || wait.ms > 0))
        throw held(`a read of subscription ${sub} reached its request's deadline, paced`, wait);
      if (wait.ms === 0) break;
      if (wait.ms > this.maxWaitMs) throw held(`reads of subscription ${sub} are paced`, wait);
      await untilAborted(this.clock.sleep(wait.ms), signal);
    }
    // Checked and spent in one synchronous step: reads woken by the same refill must not all see its last token.
    const now = this.clock.now();
    this.states.set(sub, take(READ_BUDGET, this.state(sub), now));
    const c = path === undefined ? undefined : readChargeOf(path);
    if (!c) return;
    for (const { w } of this.windowsOf(c)) w.add(now);
    for (const { key, spec } of this.bucketsOf(c))
      this.buckets.set(key, { ...take(spec, this.bucket(key, spec), now), spec });
    if (++this.takes % 256 === 0) this.sweep(now);
  }

  /** Windows with nothing counted and buckets back at capacity are what unknown ones are: forgotten. */
  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (w.empty(now)) this.windows.delete(key);
    for (const [key, s] of this.buckets)
      if (s.at <= now && refill(s.spec, s, now).tokens >= s.spec.capacity) this.buckets.delete(key);
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

  /**
   * CRP's count of what is left of each bucket a read was charged to (`x-ms-ratelimit-remaining-resource` of a GET):
   * the windows count every host's reads beyond this one's, and the resource's own bucket is lowered to it.
   */
  learnResource(path: string, header: string): void {
    const c = readChargeOf(path);
    if (!c) return;
    const now = this.clock.now();
    for (const [name, remaining] of parseRemainingResource(header)) {
      const split = splitPolicyName(name);
      const policy = split && knownPolicy(split.policy);
      if (!split || !policy || !(policy in CRP_PER_RESOURCE || policy in CRP_WINDOWS)) continue;
      if (split.scope === "3Min" || split.scope === "30Min") {
        const spec = CRP_WINDOWS[policy][split.scope];
        if (spec) this.window(c.subscriptionId, `${policy}${split.scope}`, spec).learnRemaining(now, remaining);
        continue;
      }
      // A resource's own bucket is this read's resource only when the header speaks of this read's policy.
      if (policy !== c.crp) continue;
      const read = policy as CrpReadPolicy;
      const spec = split.scope === "Resource" ? CRP_PER_RESOURCE[read] : CRP_PER_SUBSCRIPTION[read];
      const key =
        split.scope === "Resource" ? c.resource && `${read}|resource|${c.resource}` : `${read}|sub|${c.subscriptionId}`;
      if (!spec || !key) continue;
      const s = refill(spec, this.bucket(key, spec), now);
      if (s.at <= now && remaining < s.tokens)
        this.buckets.set(key, { tokens: Math.max(-spec.capacity, remaining), at: s.at, spec });
    }
  }

  throttled(sub: string, retryAfter: number): void {
    this.states.set(sub, emptyUntil(this.clock.now() + retryAfter));
  }

  /** A 429 that named CRP's buckets: reads like `path` (or of its very resource, for per-resource buckets) wait. */
  throttledBucket(path: string, buckets: string[], retryAfter: number): void {
    const key = buckets.every((b) => /Resource$/i.test(b)) ? resourceKey(path) : shapeKey(path);
    this.closed.set(key, Math.max(this.closed.get(key) ?? 0, this.clock.now() + retryAfter));
  }

  private closedFor(path: string, now: number, nrpOf?: string): number {
    let wait = 0;
    for (const key of [resourceKey(path), shapeKey(path), ...(nrpOf ? [nrpKey(nrpOf)] : [])]) {
      const until = this.closed.get(key);
      if (until === undefined) continue;
      if (until <= now) this.closed.delete(key);
      else wait = Math.max(wait, until - now);
    }
    return wait;
  }

  /** The pipeline policy: every GET to a subscription's resources goes through its budgets. */
  policy(): PipelinePolicy {
    return {
      name: "poolsyncReadPacing",
      sendRequest: async (request, next) => {
        const path = new URL(request.url).pathname;
        const sub = request.method === "GET" ? /\/subscriptions\/([^/?]+)/i.exec(path)?.[1]?.toLowerCase() : undefined;
        if (!sub) return next(request);
        await this.acquire(sub, request.abortSignal, path);
        const sent = this.clock.now();
        const response = await next(request);
        this.observeRoundTrip(this.clock.now() - sent);
        const crp = response.headers.get("x-ms-ratelimit-remaining-resource");
        if (crp) this.learnResource(path, crp);
        if (response.status === 429) {
          const wait = retryAfterMs(response.headers.get("retry-after"), 60_000);
          const buckets = namedBuckets(response.bodyAsText);
          if (buckets.length > 0) this.throttledBucket(path, buckets, wait);
          // NRP's budget is one for all its reads of the subscription (and says nothing of ARM's).
          else if (readChargeOf(path)?.nrp && /RetryableError/.test(response.bodyAsText ?? ""))
            this.closed.set(nrpKey(sub), Math.max(this.closed.get(nrpKey(sub)) ?? 0, this.clock.now() + wait));
          else this.throttled(sub, wait);
        }
        return response;
      },
    };
  }
}

/** Every read NRP answers in a subscription, as one key. */
const nrpKey = (sub: string) => `nrp:${sub}`;

/** The resource a read is about, as one key (case-insensitive, as ARM's paths are). */
const resourceKey = (path: string) => `resource:${decodeURIComponent(path).toLowerCase().replace(/\/+$/, "")}`;

/**
 * The kind of read in its subscription: its path with every name but the subscription's left out
 * (`/subscriptions/{id}/resourcegroups/*\/providers/…/*`). CRP counts each subscription's buckets apart.
 */
function shapeKey(path: string): string {
  const segments = decodeURIComponent(path).toLowerCase().replace(/\/+$/, "").split("/");
  // Segments alternate collection / name after the leading "" ; "providers" is followed by a namespace, not a name.
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i]!;
    out.push(s);
    if ((s === "providers" || (i === 1 && s === "subscriptions")) && i + 1 < segments.length) out.push(segments[++i]!);
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

/**
 * A read our pacing holds and will not send now: throttled by poolsync itself, with the wait as its Retry-After. The
 * pass comes back after it as a wait (`comeBackOf`), which never counts towards POOLSYNC_MAX_ATTEMPTS: operation polls
 * may keep ARM's read bucket spent for minutes in a burst of 30 s operations, and ten passes of the slow wide burst
 * gave up on that alone while it was taken for a failure.
 */
const held = (what: string, wait: { ms: number; why: string }) =>
  new ThrottledError(`${what} for ${Math.ceil(wait.ms / 1000)} s (${wait.why})`, wait.ms, 429, OWN_PACING);

/** The sleep, or as soon as the signal fires (the sleep's timer then runs out unobserved): the caller looks again. */
function untilAborted(sleep: Promise<void>, signal: AbortSignalLike | undefined): Promise<void> {
  if (!signal) return sleep;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => resolve();
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
