import {
  ConflictError,
  NotFoundError,
  PoolsyncError,
  RefusedError,
  ThrottledError,
  TransientError,
} from "../core/errors";
import { problem, type Problem } from "./problem";

/**
 * What the plan and a dry run answer when a read of ARM they needed failed: ARM's trouble, told as such, never the
 * host's bare 500. Throttled or unavailable (429, 5xx, a timeout, a conflict while an operation runs) is 503, with
 * ARM's Retry-After when it named one (or the wait poolsync's own read pacing knows); any other answer is 502. ARM's
 * status and error code go in `arm`; its message stays in the log, since it can name poolsync's identity and scopes.
 */
export function armProblem(err: unknown): Problem | undefined {
  if (!(err instanceof PoolsyncError) || err instanceof RefusedError) return undefined;
  const arm = { ...(err.status !== undefined ? { status: err.status } : {}), ...(err.code ? { code: err.code } : {}) };
  const answer = `${err.status ?? ""}${err.code ? ` ${err.code}` : ""}`.trim();
  if (err instanceof ThrottledError || err instanceof TransientError || err instanceof ConflictError) {
    const seconds = Math.max(1, Math.ceil(err.retryAfterMs / 1000));
    const given = !(err instanceof ConflictError) && err.retryAfterGiven;
    const what =
      err instanceof ThrottledError
        ? `ARM throttles the reads the plan needs (${answer})`
        : err.status === undefined
          ? "ARM did not answer a read the plan needed (a timeout or a dropped connection)"
          : `ARM answered ${answer} to a read the plan needed`;
    return {
      ...problem(
        503,
        err instanceof ThrottledError ? "arm_throttled" : "arm_unavailable",
        `${what}; nothing was written; try again${given ? ` after ${seconds} s` : ""}`,
        undefined,
        given ? { "retry-after": String(seconds) } : undefined,
      ),
      arm,
    };
  }
  const gone = err instanceof NotFoundError ? " (a reconcile would record its declarations target-deleted)" : "";
  return {
    ...problem(502, "arm_error", `ARM answered ${answer} to a read the plan needed${gone}; nothing was written`),
    arm,
  };
}
