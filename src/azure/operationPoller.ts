import { createPipelineRequest, type HttpClient, type Pipeline } from "@azure/core-rest-pipeline";
import { FatalError, heldByOwnPacing, ThrottledError, TransientError } from "../core/errors";
import type { Clock } from "../core/ports";
import { retryAfterMs } from "./armErrors";

/**
 * Waits for a Compute long-running operation by polling its Azure-AsyncOperation resource. The SDK's own poller
 * ends with a GET of the scale set, which would spend one of CRP's scarce VMSS reads on every write; the
 * operation resource is a different, cheaper API.
 */

const MIN_POLL_MS = 25;
/** Polls in a row that were throttled or failed before the operation is left to a re-enqueued reconcile. */
const MAX_FAILED_POLLS = 5;

export interface PollOptions {
  armEndpoint: string;
  clock: Clock;
  maxWaitMs: number;
  defaultIntervalMs: number;
}

export type OperationEnd = { status: "Succeeded" } | { status: "Failed" | "Canceled"; error: string };

export interface PolledAnswer {
  status: number;
  headers: { get(name: string): string | undefined | null };
  bodyText: string;
}

/** Long: the long-running operation's poll loop with its deadline, Retry-After and terminal states in one place. */
export async function waitForOperation(
  url: string,
  firstRetryAfter: string | null | undefined,
  opts: PollOptions,
  get: (url: string) => Promise<PolledAnswer>,
): Promise<OperationEnd> {
  // Never hand the bearer token to a host other than the ARM endpoint we were configured with.
  if (new URL(url).origin !== new URL(opts.armEndpoint).origin) {
    throw new FatalError(`operation URL ${url} is not on ${opts.armEndpoint}; refusing to poll it`);
  }
  const deadline = opts.clock.now() + opts.maxWaitMs;
  // "Retry-After: 0" (or none) means "your own interval", as the Azure SDKs read it: polling as fast as latency
  // allows would spend the subscription's read budget, which the next GET and every other poll share.
  const interval = (header: string | null | undefined) => {
    const ms = retryAfterMs(header, opts.defaultIntervalMs);
    return Math.max(MIN_POLL_MS, ms > 0 ? ms : opts.defaultIntervalMs);
  };
  let waitMs = interval(firstRetryAfter);
  // A throttled or failed poll says nothing about the operation, which goes on: wait and ask again, as long
  // as the deadline allows, rather than abandon a write that ARM accepted.
  let failedPolls = 0;
  const pollFailed = (err: TransientError, retryAfter: number): void => {
    failedPolls++;
    if (failedPolls > MAX_FAILED_POLLS || opts.clock.now() + retryAfter > deadline) throw err;
    waitMs = Math.max(MIN_POLL_MS, retryAfter);
  };
  for (;;) {
    await opts.clock.sleep(Math.min(waitMs, Math.max(0, deadline - opts.clock.now())));
    let response: PolledAnswer;
    try {
      response = await get(url);
    } catch (err) {
      // Held by our own read pacing (never sent): not a failed poll, only a later one, within the deadline.
      if (heldByOwnPacing(err) && opts.clock.now() + err.retryAfterMs <= deadline) {
        waitMs = Math.max(MIN_POLL_MS, err.retryAfterMs);
        continue;
      }
      // A read budget closed for longer than the pacer may wait says how long: ask again after that, not sooner.
      const retryAfter = err instanceof ThrottledError ? err.retryAfterMs : opts.defaultIntervalMs;
      pollFailed(new TransientError(`polling ${url}: ${(err as Error).message}`, retryAfter), retryAfter);
      continue;
    }
    if (response.status >= 500 || response.status === 429) {
      const retryAfter = retryAfterMs(response.headers.get("retry-after"), opts.defaultIntervalMs);
      pollFailed(new TransientError(`polling ${url}: ${response.status}`, retryAfter, response.status), retryAfter);
      continue;
    }
    failedPolls = 0;
    if (response.status >= 400)
      throw new FatalError(`polling ${url}: ${response.status} ${response.bodyText.slice(0, 500)}`, response.status);
    let body: { status?: string; error?: { code?: string; message?: string } };
    try {
      body = JSON.parse(response.bodyText) as typeof body;
    } catch {
      throw new TransientError(`polling ${url}: the answer is not JSON`, opts.defaultIntervalMs, response.status);
    }
    const status = (body.status ?? "").toLowerCase();
    if (status === "succeeded") return { status: "Succeeded" };
    if (status === "failed" || status === "canceled") {
      return {
        status: status === "failed" ? "Failed" : "Canceled",
        error: `${body.error?.code ?? ""} ${body.error?.message ?? ""}`.trim() || status,
      };
    }
    if (opts.clock.now() >= deadline) {
      throw new TransientError(
        `operation ${url} still ${body.status ?? "running"} after ${opts.maxWaitMs} ms`,
        opts.defaultIntervalMs,
      );
    }
    waitMs = interval(response.headers.get("retry-after"));
  }
}

/** A GET of an operation URL through an SDK client's pipeline: its credential, TLS options and read pacing. */
export async function getThroughPipeline(
  pipeline: Pipeline,
  httpClient: HttpClient,
  url: string,
  timeoutMs: number,
): Promise<PolledAnswer> {
  const response = await pipeline.sendRequest(
    httpClient,
    createPipelineRequest({ url, method: "GET", timeout: timeoutMs }),
  );
  return { status: response.status, headers: response.headers, bodyText: response.bodyAsText ?? "" };
}

/**
 * Waits for the operation a write answered with (Azure-AsyncOperation, else Location; none: it ended with the
 * answer). One that ended Failed or Canceled may have applied part of the change: retried later from fresh state.
 */
export async function awaitWriteOperation(
  headers: { get(name: string): string | undefined | null } | undefined,
  what: string,
  opts: PollOptions,
  get: (url: string) => Promise<PolledAnswer>,
): Promise<void> {
  const url = headers?.get("azure-asyncoperation") ?? headers?.get("location");
  if (!url) return;
  const end = await waitForOperation(url, headers?.get("retry-after"), opts, get);
  if (end.status !== "Succeeded") throw new TransientError(`${what}: operation ${end.status}: ${end.error}`, 30_000);
}
