import { declarationKey } from "../core/declarations";
import type { Drift } from "../core/drift";
import type { MembershipView, ScaleSetView } from "./observedState";

/** How a membership's most recent drift is answered (docs/api.md): who, when, how it was found, when repaired. */
export interface DriftAnswer {
  at: string;
  by: { name: string; id: string; appId: string };
  operation: string;
  correlationId: string;
  source: "event" | "timer";
  repairedAt: string | null;
  resourceKind: string;
  resourceId: string;
}

export type MembershipWithDrift = MembershipView & { drift: DriftAnswer | null };

export function driftAnswer(d: Drift): DriftAnswer {
  return {
    at: d.at,
    by: d.by,
    operation: d.operation,
    correlationId: d.correlationId,
    source: d.source,
    repairedAt: d.repairedAt ?? null,
    resourceKind: d.resourceKind,
    resourceId: d.resourceId,
  };
}

/** Each membership with its most recent drift (null: none seen). */
export function withDrift(view: ScaleSetView, drifts: ReadonlyMap<string, Drift>): ScaleSetView {
  const memberships: MembershipWithDrift[] = view.memberships.map((m) => {
    const d = drifts.get(declarationKey({ backendPoolId: m.backendPoolId, ipConfiguration: m.ipConfiguration ?? "" }));
    return { ...m, drift: d ? driftAnswer(d) : null };
  });
  return { ...view, memberships };
}
