import type { Config } from "../config";
import { describeError, PreconditionFailedError, ThrottledError, TransientError } from "../core/errors";
import type { Clock, Logger, WriteOptions } from "../core/ports";
import { requireEtag } from "../core/etagGuard";
import { preconditionBackoffMs } from "../core/retryPolicy";
import { comeBack, type ComeBack } from "./passResult";
import type { WritePacer } from "../pacing/writePacer";
import type { SharedWriteBudget } from "../pacing/sharedWriteBudget";
import type { LeaseGuard } from "./leaseGuard";
import type { WriteDoubts } from "../core/control";
import type { PassEvent, PassEvents } from "../core/history";

/**
 * The one If-Match loop every ARM write goes through, whatever it writes (the scale set model, one instance,
 * a NIC): pace, mark the cache row as being written, write on the ETag we read, log, store the answer; on 412
 * mark the row stale, back off, re-read and recompute. No write is ever sent without the ETag it was computed
 * from, so a concurrent writer's change is never overwritten.
 */

/** What the pacer budgets a write against. */
export type PacedTarget = Parameters<WritePacer["take"]>[0];

/** The cache row of the thing written. */
export interface CacheRow<M> {
  /** Marks the row as being written by us; returns the base for storing the answer. */
  beginWrite(clientRequestId: string): Promise<string | undefined>;
  /** Unconditional; returns the base for storing what a re-read finds. */
  markStale(reason: string): Promise<string | undefined>;
  store(model: M, base: string | undefined, ourClientRequestId?: string): Promise<unknown>;
  evict(): Promise<void>;
}

export interface IfMatchTarget<M extends { etag: string }, E> {
  /** The write budget it spends. */
  paced: PacedTarget;
  /** Names it in requeue reasons and its history's write entries. */
  id: string;
  /** What kind of resource it is, as the history names it. */
  resourceKind: "model" | "instance" | "nic" | "pool";
  /** Fields of every `arm.write` log line (scale set, which target). */
  logFields: Record<string, unknown>;
  /** The edit the current state still needs and the pools it moves, or undefined when nothing is left to write. */
  plan(current: M): { edit: E; pools: string[] } | undefined;
  write(current: M, edit: E, opts: WriteOptions): Promise<M>;
  read(): Promise<M>;
  row: CacheRow<M>;
  /** An answer meaning the target is gone (scaled in, being deleted): nothing to write, and its row goes. */
  gone?(err: unknown): boolean;
  /** Said after the target in the reason of a requeue after too many 412s. */
  context?: string;
  /**
   * The start state is read again before a write when it is older than `maxAgeMs` (read at `readAt`): an ETag names
   * a state only as long as the resource cannot have been deleted and created again under its ID (core/incarnation.ts).
   */
  age?: { readAt: number; maxAgeMs: number };
}

export interface IfMatchDeps {
  pacer: WritePacer;
  /** The subscription's budgets as every host shares them (reserved in storage before a write spends them). */
  sharedBudget?: Pick<SharedWriteBudget, "take">;
  clock: Clock;
  log: Logger;
  /** A client request id for a write to this resource (recognisable in its events: azure/requestIds.ts). */
  newRequestId: (resourceId: string) => string;
  random?: () => number;
  config: Pick<Config, "maxPreconditionRetries" | "pacingMaxWaitMs">;
  /** The pass's lease: a write goes out only while it is known to outlast the write (LeaseGuard). */
  lease?: Pick<LeaseGuard, "ensureHeld">;
  /** Where a write whose answer never came is recorded (it may still land while its ETag holds). */
  doubts?: Pick<WriteDoubts, "record">;
  /** The pass's events: each write goes into its target's history. */
  events?: PassEvents;
  /**
   * Resources (lower-case IDs) whose next write's token the pass took before it read (reconcile/writeBudget.ts): that
   * write spends it instead of pacing, once.
   */
  credit?: Set<string>;
}

/** What pacing one write needs of the loop's dependencies. */
export type BudgetDeps = Pick<IfMatchDeps, "pacer" | "sharedBudget" | "clock" | "credit"> & {
  config: Pick<Config, "pacingMaxWaitMs">;
};

export type IfMatchResult<M> =
  | { kind: "written"; model: M }
  | { kind: "unchanged"; model: M }
  | { kind: "gone" }
  /** Nothing more is written in this pass: the budget is spent, 412s kept coming, or the lease lapsed. */
  | { kind: "come-back"; comeBack: ComeBack };

/**
 * Writes until the plan is empty; a 412 re-reads and recomputes; too many 412s in a row, a write budget spent for
 * longer than a pass waits, or a lapsed lease end it with a come-back.
 * Long: the If-Match loop: pace, lease, re-read if old, write, and on 412 back off and re-read, in the order that
 * keeps no change lost; one loop is easier to check than pieces.
 */
export async function ifMatchWrite<M extends { etag: string }, E>(
  target: IfMatchTarget<M, E>,
  start: M,
  deps: IfMatchDeps,
): Promise<IfMatchResult<M>> {
  let current = start;
  let readAt = target.age?.readAt ?? deps.clock.now();
  for (let attempt = 0; ; attempt++) {
    let plan = target.plan(current);
    if (!plan) return { kind: "unchanged", model: current };
    const later = (await pace(target.paced, deps)) ?? (await deps.lease?.ensureHeld());
    if (later) return { kind: "come-back", comeBack: later };
    if (target.age && deps.clock.now() - readAt > target.age.maxAgeMs) {
      // Read at the last moment: the write computed from it goes out on the budget just taken.
      const reread = await readOrGone(target);
      if (reread === "gone") return goneFrom(target);
      current = reread;
      plan = target.plan(current);
      if (!plan) return { kind: "unchanged", model: current };
    }
    const clientRequestId = deps.newRequestId(target.id);
    const line = { ...target.logFields, pools: plan.pools, ifMatch: current.etag, clientRequestId };
    requireEtag(target.id, current.etag);
    // An invalidation after this point (someone else's write) makes the store of our answer lose, as it should.
    const base = await target.row.beginWrite(clientRequestId);
    const sentAt = deps.clock.now();
    try {
      const after = await learnThrottle(target.paced, deps, () =>
        target.write(current, plan.edit, { ifMatch: current.etag, clientRequestId }),
      );
      deps.log.info("arm.write", { ...line, etag: after.etag, outcome: "ok" });
      deps.events?.emit(writeEvent(target, line, after.etag, "ok"));
      // An answer without an ETag is not cached: nothing could be written on it with If-Match.
      if (after.etag) await target.row.store(after, base, clientRequestId);
      return { kind: "written", model: after };
    } catch (err) {
      deps.log.info("arm.write", { ...line, outcome: describeError(err) });
      deps.events?.emit(writeEvent(target, line, "", describeError(err)));
      // No answer, or a 5xx: ARM may have taken it, and may still apply it while the ETag holds.
      if (err instanceof TransientError)
        deps.doubts?.record({ resourceId: target.id, ifMatch: current.etag, at: sentAt });
      if (target.gone?.(err)) return goneFrom(target);
      if (!(err instanceof PreconditionFailedError)) throw err;
      if (attempt >= deps.config.maxPreconditionRetries) {
        const context = target.context ? ` (${target.context})` : "";
        return {
          kind: "come-back",
          comeBack: comeBack(
            "retry",
            preconditionBackoffMs(attempt, deps.random),
            `${attempt + 1} precondition failures in a row on ${target.id}${context}`,
          ),
        };
      }
      const staleBase = await target.row.markStale("412 on our write");
      await deps.clock.sleep(preconditionBackoffMs(attempt, deps.random));
      // Wait for the write budget before the re-read, not between it and the write: ETags move in that gap (other
      // writers, and CRP's own bump seconds after any instance write), and a 412 spends a write token too.
      const spent = await budgetReady(target.paced, deps);
      if (spent) return { kind: "come-back", comeBack: spent };
      const reread = await readOrGone(target);
      if (reread === "gone") return goneFrom(target);
      current = reread;
      readAt = deps.clock.now();
      await target.row.store(current, staleBase);
    }
  }
}

function writeEvent<M extends { etag: string }, E>(
  target: IfMatchTarget<M, E>,
  line: { pools: string[]; ifMatch: string; clientRequestId: string },
  etag: string,
  outcome: string,
): PassEvent {
  const { pools, ifMatch, clientRequestId } = line;
  return {
    kind: "write",
    resourceId: target.id,
    resourceKind: target.resourceKind,
    ifMatch,
    etag,
    pools,
    outcome,
    clientRequestId,
  };
}

async function readOrGone<M extends { etag: string }, E>(target: IfMatchTarget<M, E>): Promise<M | "gone"> {
  try {
    return await target.read();
  } catch (err) {
    if (target.gone?.(err)) return "gone";
    throw err;
  }
}

async function goneFrom<M extends { etag: string }, E>(target: IfMatchTarget<M, E>): Promise<IfMatchResult<M>> {
  await target.row.evict();
  return { kind: "gone" };
}

/** The come-back of a write whose budget is spent: its reason names the resource (writeBudget.ts finds it again). */
export function budgetSpent(id: string, waitMs: number, shared: boolean): ComeBack {
  const which = shared ? "shared write budget" : "write budget";
  return comeBack("wait", waitMs, `pacing: ${which} of ${id} is spent for ${Math.ceil(waitMs / 1000)} s`);
}

/**
 * Waits for the write budget (briefly) and takes it, or answers when to come back, when it is there: a write that
 * would only earn a 429 is never sent. A credit for the resource is that token, taken before the pass read.
 */
export async function pace(target: PacedTarget, deps: BudgetDeps): Promise<ComeBack | undefined> {
  if (deps.credit?.delete(target.id.toLowerCase())) return undefined;
  const spent = await budgetReady(target, deps);
  if (spent) return spent;
  if (deps.sharedBudget) {
    // Reserved from what every host shares before it is spent here.
    const wait = await deps.sharedBudget.take(target, (ms) => deps.clock.sleep(ms), deps.config.pacingMaxWaitMs);
    if (wait > 0) return budgetSpent(target.id, wait, true);
  }
  // Checked and spent in one synchronous step: writers woken by the same refill must not all see its last token.
  while (deps.pacer.waitMs(target) > 0) {
    const later = await budgetReady(target, deps);
    if (later) return later;
  }
  deps.pacer.take(target);
  return undefined;
}

/** Waits (briefly) until the write budget has a token, or answers when to come back; takes nothing. */
async function budgetReady(target: PacedTarget, deps: BudgetDeps): Promise<ComeBack | undefined> {
  for (;;) {
    const wait = deps.pacer.waitMs(target);
    if (wait === 0) return undefined;
    if (wait > deps.config.pacingMaxWaitMs) return budgetSpent(target.id, wait, false);
    await deps.clock.sleep(wait);
  }
}

/** Sends the write; on 429 the pacer learns that budget is empty until Retry-After. */
async function learnThrottle<T>(target: PacedTarget, deps: IfMatchDeps, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof ThrottledError) deps.pacer.throttled(target, err.retryAfterMs, err.message);
    throw err;
  }
}
