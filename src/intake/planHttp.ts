import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { parseTargetId } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { scopeProblem } from "./declareRequest";
import type { PlanPort } from "./dryRun";
import { isStorageFailure, type IntakeServices } from "./intakeServices";
import { jsonResponse, methodNotAllowed, problem, problemResponse } from "./problem";
import { authorize, ROLES } from "./principal";

export const PLAN_METHODS = ["GET"] as const;

/**
 * `GET /api/plan?targetId=` (poolsync.Read): what a reconcile of the target would write now, for the declarations
 * stored now. Reads ARM only where the reconcile would; writes nothing anywhere.
 */
export async function handlePlan(request: Pick<HttpRequest, "method" | "query" | "headers">, s: IntakeServices & Partial<PlanPort>): Promise<HttpResponseInit> {
  const auth = authorize(request.headers, s.config, ROLES.read);
  if (!auth.ok) return problemResponse(auth.problem);
  if (request.method !== "GET") return problemResponse(methodNotAllowed(request.method, PLAN_METHODS));
  const raw = request.query.get("targetId");
  if (raw === null || raw === "") return problemResponse(problem(400, "missing_query", "targetId: is required (a scale set or VM ID)", "targetId"));
  const ref = parseTargetId(raw);
  if (!ref.ok) return problemResponse(problem(400, "invalid_field", `targetId: ${ref.reason}`, "targetId"));
  if (!inScopes(s.config.scopes, ref.value.subscriptionId, ref.value.resourceGroup))
    return problemResponse(scopeProblem("targetId", ref.value.id, s.config.scopes));
  if (!s.plan) return problemResponse(problem(503, "storage_unavailable", "planning is not available on this host"));
  try {
    await s.ready();
    return jsonResponse(200, await s.plan(ref.value));
  } catch (err) {
    if (!isStorageFailure(err)) throw err;
    s.log.error("plan.error", { targetId: ref.value.id, error: (err as Error).message });
    return problemResponse(problem(503, "storage_unavailable", "storage or ARM is unavailable; try again", undefined, { "retry-after": "5" }));
  }
}
