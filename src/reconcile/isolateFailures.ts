import { describeError, FatalError } from "../core/errors";
import { comeBack, type ComeBack } from "./passResult";

/**
 * One write carries every intent of a scale set, so one bad intent (a pool of a load balancer that does not exist:
 * 400 InvalidResourceReference; a pool we may not join: 403 LinkedAuthorizationFailed) would fail them all, again on
 * every retry. After such a terminal answer the intents are split in halves and each half written on its own,
 * recursively, until every intent either went through with others or failed alone; only those fail, with ARM's
 * reason. k bad intents out of n cost about 2·k·log2(n) extra writes, and a half whose edit is already in place
 * costs none (the write loop sends nothing when nothing changes).
 *
 * What it learns is handed out the moment it is known (`onFailed`), not at the end: a pass that stops (its budget
 * spent, a throttle) must not lose it, or the next attempt starts the bisection over and every failing write drains
 * the scale set's CRP budget again. The bisection's own writes are bounded per pass (`budget`): past it
 * the isolation stops with a come-back, and the next attempt goes on without the intents already known to fail.
 *
 * A write that comes back (`WriteStep`'s come-back: the budget spent, 412s in a row, the lease lost) stops the
 * isolation with it; anything but a terminal answer (429, 409, a timeout, 404) ends it and propagates: those are about
 * the target, not one intent, and the reconcile's own handling applies. What was written before stays written, and
 * the next reconcile finds it in place.
 */

export interface Isolated<S> {
  state: S;
  /** Index of each intent whose own write failed → ARM's reason. */
  failed: Map<number, string>;
  /** Set when the isolation stopped before every intent was written or failed: when the pass comes back, and why. */
  comeBack?: ComeBack;
}

/** One write's answer: the state after it, or when to come back (nothing more is written in this pass). */
export type WriteStep<S> = { state: S } | { comeBack: ComeBack };

/** The writes a pass may spend bisecting, shared by its isolations (the model's, the instances'). */
export interface IsolationBudget {
  left: number;
}

/** Bisection writes per pass: 4 bad intents of 200 need about 2·4·8 = 64, so a few passes settle even that. */
export const ISOLATION_WRITES_PER_PASS = 16;
/** How soon a pass whose isolation budget ran out comes back (the scale set's CRP budget refills meanwhile). */
export const ISOLATION_REQUEUE_MS = 30_000;

export interface IsolationHooks {
  budget?: IsolationBudget;
  /** One intent failed alone: recorded at once, so a later attempt skips it even if this pass never ends well. */
  onFailed?: (index: number, reason: string) => Promise<void>;
}

const terminal = (err: unknown): err is FatalError => err instanceof FatalError;

export async function isolateFailures<S>(
  count: number,
  start: S,
  write: (indices: number[], state: S) => Promise<WriteStep<S>>,
  hooks: IsolationHooks = {},
): Promise<Isolated<S>> {
  let state = start;
  const failed = new Map<number, string>();
  let stopped: ComeBack | undefined;
  const attempt = async (indices: number[], bisecting: boolean): Promise<void> => {
    if (indices.length === 0 || stopped) return;
    if (bisecting && hooks.budget) {
      if (hooks.budget.left <= 0) {
        stopped = comeBack(
          "retry",
          ISOLATION_REQUEUE_MS,
          `failure isolation spent its ${ISOLATION_WRITES_PER_PASS} writes this pass; the failures found so far are recorded`,
        );
        return;
      }
      hooks.budget.left--;
    }
    try {
      const step = await write(indices, state);
      if ("comeBack" in step) {
        stopped = step.comeBack;
        return;
      }
      state = step.state;
      return;
    } catch (err) {
      if (!terminal(err)) throw err;
      if (indices.length === 1) {
        const reason = describeError(err);
        failed.set(indices[0]!, reason);
        await hooks.onFailed?.(indices[0]!, reason);
        return;
      }
    }
    const half = Math.ceil(indices.length / 2);
    await attempt(indices.slice(0, half), true);
    await attempt(indices.slice(half), true);
  };
  await attempt(
    Array.from({ length: count }, (_, i) => i),
    false,
  );
  return { state, failed, ...(stopped ? { comeBack: stopped } : {}) };
}
