import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { armProblem } from "./armProblem";
import type { PlanPort } from "./dryRun";
import { isStorageFailure, type IntakeServices } from "./intakeServices";
import { jsonResponse, problem, problemResponse } from "./problem";
import { readTargetQuery } from "./targetQuery";

export const PLAN_METHODS = ["GET"] as const;

/**
 * `GET /api/plan?targetId=` (poolsync.Read): what a reconcile of the target would write now, for the declarations
 * stored now. Reads ARM only where the reconcile would; writes nothing anywhere.
 */
export async function handlePlan(
  request: Pick<HttpRequest, "method" | "query" | "headers">,
  s: IntakeServices & Partial<PlanPort>,
): Promise<HttpResponseInit> {
  const target = readTargetQuery(request, s, PLAN_METHODS);
  if (!target.ok) return target.response;
  if (!s.plan) return problemResponse(problem(503, "storage_unavailable", "planning is not available on this host"));
  try {
    await s.ready();
    return jsonResponse(200, await s.plan(target.ref));
  } catch (err) {
    const arm = armProblem(err);
    if (arm) {
      s.log.warn("plan.arm-error", { targetId: target.ref.id, status: arm.status, error: (err as Error).message });
      return problemResponse(arm);
    }
    if (!isStorageFailure(err)) throw err;
    s.log.error("plan.error", { targetId: target.ref.id, error: (err as Error).message });
    return problemResponse(
      problem(503, "storage_unavailable", "storage is unavailable; try again", undefined, {
        "retry-after": "5",
      }),
    );
  }
}
