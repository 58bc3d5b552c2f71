import type { InstanceRef, ScaleSetRef } from "../core/resourceIds";
import { WRITE_BUDGETS } from "../core/tokenBucket";
import type { WritePacer } from "./writePacer";

/** What one ARM or CRP answer said is left of a budget (read from its headers at the edge, azure/rateLimitHeaders). */
export type RateLimitObservation =
  | { kind: "armReads" | "armWrites"; subscriptionId: string; remaining: number }
  /**
   * CRP: `scope` resource for the target's own bucket, subscription for a subscription-wide one; `window` names which
   * of the published windows (absent for the per-minute `…SubscriptionMaximum` of earlier recordings).
   */
  | {
      kind: "scaleSetWrites" | "instanceWrites";
      scope: "resource" | "subscription";
      window?: "3Min" | "30Min";
      target: ScaleSetRef | InstanceRef;
      remaining: number;
    };

/** ARM's documented write bucket; the pacer's holds 20 fewer, and keeps that margin below what ARM reports. */
const ARM_WRITES_BUCKET = 200;
const ARM_WRITES_MARGIN = ARM_WRITES_BUCKET - WRITE_BUDGETS.armWrites.capacity;

/**
 * Feeds the write pacer what the server says is left of the budgets it paces (ARM's reads go to the read pacer). The
 * per-minute `…SubscriptionMaximum` of earlier recordings (1,500, 500 a minute) is looser than the published windows
 * the pacer keeps to anyway: nothing to learn from it.
 */
export function learnWriteBudget(
  pacer: Pick<WritePacer, "learnRemaining" | "learnArmWrites" | "learnWindow">,
  o: RateLimitObservation,
): void {
  if (o.kind === "armWrites") pacer.learnArmWrites(o.subscriptionId, o.remaining - ARM_WRITES_MARGIN);
  else if (o.kind === "scaleSetWrites" || o.kind === "instanceWrites") {
    if (o.scope === "resource") pacer.learnRemaining(o.target, "target", o.remaining);
    else if (o.window) pacer.learnWindow(o.target, o.window, o.remaining);
  }
}
