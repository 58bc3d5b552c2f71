import type { Config } from "../config";
import { ThrottledError } from "../core/errors";
import type { Clock } from "../core/ports";
import { parseComputeId, parseNicId, type InstanceRef, type NicRef, type ScaleSetRef } from "../core/resourceIds";
import type { SharedWriteBudget } from "../pacing/sharedWriteBudget";
import type { WritePacer } from "../pacing/writePacer";
import { comeBack, type ComeBack } from "./passResult";

/**
 * A write's budget, before it is sent: this host's pacer and every host's shared budget, and, for a pass that came back
 * because a budget was spent, the token taken before it reads again (`payAhead`): a pass that reads and then finds the
 * budget spent once more has read for nothing (the steady hour at the real windows: 869 such reads, bench/RESULTS.md).
 */

/** What the pacer budgets a write against. */
export type PacedTarget = ScaleSetRef | InstanceRef | NicRef;

export interface BudgetDeps {
  pacer: WritePacer;
  /** The subscription's budgets as every host shares them (reserved in storage before a write spends them). */
  sharedBudget?: Pick<SharedWriteBudget, "take">;
  clock: Clock;
  config: Pick<Config, "pacingMaxWaitMs">;
  /** Resources (lower-case IDs) whose next write's token this pass already took (payAhead): spent once, then gone. */
  credit?: Set<string>;
}

/** The come-back of a write whose budget is spent: its reason names the resource, for `budgetOwed` to find again. */
export function budgetSpent(id: string, waitMs: number, shared: boolean): ComeBack {
  const which = shared ? "shared write budget" : "write budget";
  return comeBack("wait", waitMs, `pacing: ${which} of ${id} is spent for ${Math.ceil(waitMs / 1000)} s`);
}

const OWED = /(?:^|; )retry after: pacing: (?:shared )?write budget of (\S+) is spent/i;

/**
 * The resource whose spent budget sent the pass back, from its trigger's reason (the runner requeues with "retry
 * after: " and the come-back's reason): a scale set, an instance or a NIC; undefined for any other reason.
 */
export function budgetOwed(triggerReason: string): PacedTarget | undefined {
  const id = OWED.exec(triggerReason)?.[1];
  if (!id) return undefined;
  const compute = parseComputeId(id);
  if (compute.ok) return compute.value;
  const nic = parseNicId(id);
  return nic.ok ? nic.value : undefined;
}

/**
 * Takes the budget of the write that sent the pass back before the pass reads anything: a come-back when it is still
 * spent (nothing read), else the credit the If-Match loop spends on that resource's first write.
 */
export async function payAhead(
  target: PacedTarget,
  deps: BudgetDeps,
): Promise<{ comeBack: ComeBack } | { credit: Set<string> }> {
  const later = await pace(target, deps);
  return later ? { comeBack: later } : { credit: new Set([target.id.toLowerCase()]) };
}

/**
 * Waits for the write budget (briefly) and takes it, or answers when to come back, when it is there: a write that
 * would only earn a 429 is never sent.
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
export async function budgetReady(target: PacedTarget, deps: BudgetDeps): Promise<ComeBack | undefined> {
  for (;;) {
    const wait = deps.pacer.waitMs(target);
    if (wait === 0) return undefined;
    if (wait > deps.config.pacingMaxWaitMs) return budgetSpent(target.id, wait, false);
    await deps.clock.sleep(wait);
  }
}

/** Sends the write; on 429 the pacer learns that budget is empty until Retry-After. */
export async function learnThrottle<T>(
  target: PacedTarget,
  deps: Pick<BudgetDeps, "pacer">,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof ThrottledError) deps.pacer.throttled(target, err.retryAfterMs, err.message);
    throw err;
  }
}
