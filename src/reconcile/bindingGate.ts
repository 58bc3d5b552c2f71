import { checkBinding, type BindingRule } from "../core/bindings";

/** POOLSYNC_BINDINGS as the reconcile applies it before any write (the intake applied it when it accepted). */
export function bindingAllows(rules: readonly BindingRule[], targetId: string, poolId: string): boolean {
  return checkBinding(rules, targetId, poolId).allowed;
}

export function bindingRefusal(rules: readonly BindingRule[], targetId: string, poolId: string): string {
  const verdict = checkBinding(rules, targetId, poolId);
  return verdict.allowed ? "" : `refused by POOLSYNC_BINDINGS: ${verdict.reason}`;
}
