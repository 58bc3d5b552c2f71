import { parseComputeId, parseNicId } from "../core/resourceIds";
import { pace, type BudgetDeps, type PacedTarget } from "./ifMatchWrite";
import type { ComeBack } from "./passResult";

/**
 * A pass that came back because a write budget was spent takes that budget before it reads again (`payAhead`): one
 * that reads and then finds the budget spent once more has read for nothing (the steady hour at the real windows: 869
 * such reads, bench/RESULTS.md). Which budget, its trigger's reason says: the If-Match loop's come-back names the
 * resource (`budgetSpent`), and the runner requeues with that reason.
 */

/** `budgetSpent`'s reason behind the runner's "retry after: " (alone, or first of a merged trigger's or after "; "). */
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
