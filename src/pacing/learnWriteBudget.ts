import type { InstanceRef, ScaleSetRef } from "../core/resourceIds";
import { WRITE_BUDGETS } from "../core/tokenBucket";
import type { WritePacer } from "./writePacer";

/** What one ARM or CRP answer said is left of a budget (read from its headers at the edge, azure/rateLimitHeaders). */
export type RateLimitObservation =
  | { kind: "armReads" | "armWrites"; subscriptionId: string; remaining: number }
  /** CRP: `scope` resource for the target's own bucket, subscription for the subscription-wide one. */
  | {
      kind: "scaleSetWrites" | "instanceWrites";
      scope: "resource" | "subscription";
      target: ScaleSetRef | InstanceRef;
      remaining: number;
    };

/** ARM's documented write bucket; the pacer's holds 20 fewer, and keeps that margin below what ARM reports. */
const ARM_WRITES_BUCKET = 200;
const ARM_WRITES_MARGIN = ARM_WRITES_BUCKET - WRITE_BUDGETS.armWrites.capacity;

/** Feeds the write pacer what the server says is left of the budgets it paces (ARM's reads go to the read pacer). */
export function learnWriteBudget(
  pacer: Pick<WritePacer, "learnRemaining" | "learnArmWrites">,
  o: RateLimitObservation,
): void {
  if (o.kind === "armWrites") pacer.learnArmWrites(o.subscriptionId, o.remaining - ARM_WRITES_MARGIN);
  else if (o.kind === "scaleSetWrites" || o.kind === "instanceWrites")
    pacer.learnRemaining(o.target, o.scope === "resource" ? "target" : "subscription", o.remaining);
}
