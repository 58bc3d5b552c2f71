/**
 * One error type per outcome class of an ARM call, so the reconcile decides by type, never by parsing messages.
 * `retriable` tells system trouble (try again later) from a terminal answer.
 */

export abstract class PoolsyncError extends Error {
  abstract readonly retriable: boolean;
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 412: our If-Match ETag is old; re-read and recompute. */
export class PreconditionFailedError extends PoolsyncError {
  readonly retriable = true;
}

/** 429: Compute RP's token bucket is empty; come back after retryAfterMs, not sooner. */
export class ThrottledError extends PoolsyncError {
  readonly retriable = true;
  constructor(
    message: string,
    readonly retryAfterMs: number,
    status = 429,
    code?: string,
    /** False when ARM named no wait and retryAfterMs is poolsync's own default. */
    readonly retryAfterGiven = true,
  ) {
    super(message, status, code);
  }
}

/**
 * The code of a ThrottledError for a request never sent: poolsync's own read pacing held it longer than it may wait
 * (POOLSYNC_PACING_MAX_WAIT_SECONDS) or until its request's deadline. A wait of ours, not a failure of ARM's.
 */
export const OWN_PACING = "PoolsyncPacing";

/** A read poolsync's own pacing held and never sent (a wait of ours). */
export const heldByOwnPacing = (err: unknown): err is ThrottledError =>
  err instanceof ThrottledError && err.code === OWN_PACING;

/** A 429 of ARM's, not a hold of poolsync's own pacing: what a pass counts and reports as throttled. */
export const throttledByArm = (err: unknown): err is ThrottledError =>
  err instanceof ThrottledError && !heldByOwnPacing(err);

/** 409 from a concurrent operation on the same resource: retriable after a few seconds. */
export class ConflictError extends PoolsyncError {
  readonly retriable = true;
  constructor(
    message: string,
    readonly retryAfterMs: number,
    status = 409,
    code?: string,
  ) {
    super(message, status, code);
  }
}

/** 404: the scale set, instance, or its resource group is gone. */
export class NotFoundError extends PoolsyncError {
  readonly retriable = false;
}

/** The target is being deleted (provisioningState Deleting, or CRP's "marked for deletion" 409): never write it. */
export class BeingDeletedError extends PoolsyncError {
  readonly retriable = false;
}

/** 5xx, dropped connection, timeout: the call may or may not have happened. Retry from fresh state. */
export class TransientError extends PoolsyncError {
  readonly retriable = true;
  constructor(
    message: string,
    readonly retryAfterMs: number,
    status?: number,
    code?: string,
    /** False when ARM named no wait and retryAfterMs is poolsync's own default. */
    readonly retryAfterGiven = true,
  ) {
    super(message, status, code);
  }
}

/** Anything else (400, 401, 403, a failed operation): recorded where the status API shows it, not retried in a loop. */
export class FatalError extends PoolsyncError {
  readonly retriable = false;
}

/** Refused before any ARM call: outside POOLSYNC_SCOPES, bad ID, unknown ip configuration. */
export class RefusedError extends PoolsyncError {
  readonly retriable = false;
}

export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
