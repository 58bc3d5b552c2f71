import { describeError, FatalError } from "../core/errors";

/**
 * One write carries every intent of a scale set, so one bad intent (a pool of a load balancer that does not exist:
 * 400 InvalidResourceReference; a pool we may not join: 403 LinkedAuthorizationFailed) would fail them all, again on
 * every retry. After such a terminal answer the intents are split in halves and each half written on its own,
 * recursively, until every intent either went through with others or failed alone; only those fail, with ARM's
 * reason. k bad intents out of n cost about 2·k·log2(n) extra writes, and a half whose edit is already in place
 * costs none (the write loop sends nothing when nothing changes).
 *
 * Anything but a terminal answer (412 exhausted, 429, 409, a timeout, 404) ends the isolation and propagates: those
 * are about the target, not one intent, and the reconcile's own handling applies. What was written before stays
 * written, and the next reconcile finds it in place.
 */

export interface Isolated<S> {
  state: S;
  /** Index of each intent whose own write failed → ARM's reason. */
  failed: Map<number, string>;
}

const terminal = (err: unknown): err is FatalError => err instanceof FatalError;

export async function isolateFailures<S>(count: number, start: S, write: (indices: number[], state: S) => Promise<S>): Promise<Isolated<S>> {
  let state = start;
  const failed = new Map<number, string>();
  const attempt = async (indices: number[]): Promise<void> => {
    if (indices.length === 0) return;
    try {
      state = await write(indices, state);
      return;
    } catch (err) {
      if (!terminal(err)) throw err;
      if (indices.length === 1) {
        failed.set(indices[0]!, describeError(err));
        return;
      }
    }
    const half = Math.ceil(indices.length / 2);
    await attempt(indices.slice(0, half));
    await attempt(indices.slice(half));
  };
  await attempt(Array.from({ length: count }, (_, i) => i));
  return { state, failed };
}
