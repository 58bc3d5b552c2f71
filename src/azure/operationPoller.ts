import type { TokenCredential } from "@azure/core-auth";
import { FatalError, TransientError } from "../core/errors";
import type { Clock } from "../core/ports";
import { retryAfterMs } from "./armErrors";

/**
 * Waits for a Compute long-running operation by polling its Azure-AsyncOperation resource. The SDK's own poller
 * ends with a GET of the scale set, which would spend one of CRP's scarce VMSS reads on every write; the
 * operation resource is a different, cheaper API.
 */

export interface PollOptions {
  armEndpoint: string;
  credential: TokenCredential;
  scope: string;
  clock: Clock;
  timeoutMs: number;
  maxWaitMs: number;
  defaultIntervalMs: number;
}

export type OperationEnd = { status: "Succeeded" } | { status: "Failed" | "Canceled"; error: string };

export async function waitForOperation(url: string, firstRetryAfter: string | null | undefined, opts: PollOptions): Promise<OperationEnd> {
  // Never hand the bearer token to a host other than the ARM endpoint we were configured with.
  if (new URL(url).origin !== new URL(opts.armEndpoint).origin) {
    throw new FatalError(`operation URL ${url} is not on ${opts.armEndpoint}; refusing to poll it`);
  }
  const deadline = opts.clock.now() + opts.maxWaitMs;
  let waitMs = retryAfterMs(firstRetryAfter, opts.defaultIntervalMs);
  for (;;) {
    await opts.clock.sleep(Math.min(waitMs, Math.max(0, deadline - opts.clock.now())));
    const token = await opts.credential.getToken(opts.scope);
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${token?.token ?? ""}`, accept: "application/json" },
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
    } catch (err) {
      throw new TransientError(`polling ${url}: ${(err as Error).message}`, opts.defaultIntervalMs);
    }
    if (response.status >= 500 || response.status === 429) {
      throw new TransientError(`polling ${url}: ${response.status}`, retryAfterMs(response.headers.get("retry-after"), opts.defaultIntervalMs), response.status);
    }
    if (!response.ok) throw new FatalError(`polling ${url}: ${response.status} ${await response.text()}`, response.status);
    const body = (await response.json()) as { status?: string; error?: { code?: string; message?: string } };
    const status = (body.status ?? "").toLowerCase();
    if (status === "succeeded") return { status: "Succeeded" };
    if (status === "failed" || status === "canceled") {
      return { status: status === "failed" ? "Failed" : "Canceled", error: `${body.error?.code ?? ""} ${body.error?.message ?? ""}`.trim() || status };
    }
    if (opts.clock.now() >= deadline) {
      throw new TransientError(`operation ${url} still ${body.status ?? "running"} after ${opts.maxWaitMs} ms`, opts.defaultIntervalMs);
    }
    waitMs = retryAfterMs(response.headers.get("retry-after"), opts.defaultIntervalMs);
  }
}
