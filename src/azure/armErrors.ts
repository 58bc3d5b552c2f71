import { isRestError } from "@azure/core-rest-pipeline";
import {
  BeingDeletedError,
  ConflictError,
  FatalError,
  NotFoundError,
  PoolsyncError,
  PreconditionFailedError,
  ThrottledError,
  TransientError,
} from "../core/errors";

/**
 * Turns whatever an ARM call threw into one of poolsync's typed outcomes. CRP does not document its 409 codes,
 * so conflict vs. "marked for deletion" is told by the message text, as cloud-provider-azure does.
 */

const DEFAULT_CONFLICT_RETRY_MS = 5_000;
const DEFAULT_TRANSIENT_RETRY_MS = 5_000;
// Retry-After over an hour is seen in the wild; cap what we wait so one bad header cannot park work for days.
const MAX_RETRY_AFTER_MS = 6 * 3_600_000;

export function retryAfterMs(value: string | null | undefined, fallbackMs: number, now = Date.now()): number {
  if (!value) return fallbackMs;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(value);
  if (Number.isFinite(date)) return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
  return fallbackMs;
}

interface ErrorFacts {
  status: number | undefined;
  code: string | undefined;
  message: string;
  retryAfter: string | undefined;
}

function factsOf(err: unknown, answered?: string): ErrorFacts {
  if (isRestError(err)) {
    // The SDKs' long-running calls throw without the body (code and message only): the caller may have kept it.
    const body = err.response?.bodyAsText ?? answered;
    let code = err.code;
    let message = err.message;
    if (body) {
      try {
        const parsed = JSON.parse(body) as {
          error?: { code?: string; message?: string; details?: { code?: string; message?: string }[] };
          code?: string;
          message?: string;
        };
        code = parsed.error?.code ?? parsed.code ?? code;
        message = parsed.error?.message ?? parsed.message ?? message;
        // Network RP's 412 says only "Precondition failed."; the ETags are in its detail. Its 429 RetryableError says
        // only "A retryable error occurred.": the detail tells its budget spent from a referenced resource being written.
        const detail = parsed.error?.details?.find(
          (d) => d.code === "PreconditionFailedEtagMismatch" || (code === "RetryableError" && d.code),
        );
        if (detail?.message)
          message = `${message} ${code === "RetryableError" ? `${detail.code}: ` : ""}${detail.message}`;
      } catch {
        // not JSON: keep the SDK's own text
      }
    }
    return { status: err.statusCode, code, message, retryAfter: err.response?.headers.get("retry-after") ?? undefined };
  }
  const e = err as { name?: string; message?: string; code?: string };
  return { status: undefined, code: e?.code ?? e?.name, message: e?.message ?? String(err), retryAfter: undefined };
}

/**
 * CRP's answer to a write to a VMSS instance that is being deleted or already gone (a routine scale-in): 400
 * InvalidParameter "The provided instanceId N is not an active Virtual Machine Scale Set VM instanceId.", target
 * "instanceIds" (cloud-provider-azure treats it as success: `InstanceIdsListInstanceIdNotActiveVM`). It says the
 * instance is gone, not that the request was bad: read as a 404, it is skipped, never isolated or retried.
 */
const INSTANCE_NOT_ACTIVE = /is not an active Virtual Machine Scale Set VM instanceId/i;

/** `answered`: the failed answer's body, where the SDK's error lost it (a long-running call's first answer). */
export function classifyArmError(err: unknown, what: string, answered?: string): PoolsyncError {
  if (err instanceof PoolsyncError) return err;
  const f = factsOf(err, answered);
  const text = `${what}: ${f.status ?? "no answer"} ${f.code ?? ""} ${f.message}`.replace(/\s+/g, " ").trim();
  if (f.status === 412) return new PreconditionFailedError(text, 412, f.code);
  // Whether ARM named a wait at all: the HTTP API passes ARM's Retry-After on, never a default of poolsync's.
  const given = Number.isFinite(retryAfterMs(f.retryAfter, Number.NaN));
  if (f.status === 429) return new ThrottledError(text, retryAfterMs(f.retryAfter, 60_000), 429, f.code, given);
  if (f.status === 404) return new NotFoundError(text, 404, f.code);
  if (f.status === 400 && INSTANCE_NOT_ACTIVE.test(f.message)) return new NotFoundError(text, 400, f.code);
  if (f.status === 409) {
    if (/marked for deletion|being deleted/i.test(f.message)) return new BeingDeletedError(text, 409, f.code);
    return new ConflictError(text, retryAfterMs(f.retryAfter, DEFAULT_CONFLICT_RETRY_MS), 409, f.code);
  }
  if (f.status === undefined || f.status === 408 || f.status >= 500) {
    return new TransientError(text, retryAfterMs(f.retryAfter, DEFAULT_TRANSIENT_RETRY_MS), f.status, f.code, given);
  }
  return new FatalError(text, f.status, f.code);
}
