import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { parseTargetId, type TargetRef } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { scopeProblem } from "./declareRequest";
import type { IntakeServices } from "./intakeServices";
import { methodNotAllowed, problem, problemResponse } from "./problem";
import { authorize, ROLES } from "./principal";
import { readQueryFlags, type QueryFlags } from "./queryFlags";

/**
 * What every read-only `GET /api/…?targetId=` endpoint checks first, in the same order and with the same answers:
 * the caller may read, the method is GET, no parameter is repeated (`targetId` and the route's own `flags`), and
 * `targetId` names a scale set or VM inside POOLSYNC_SCOPES.
 */
export function readTargetQuery<const F extends string = never>(
  request: Pick<HttpRequest, "method" | "query" | "headers">,
  s: Pick<IntakeServices, "config">,
  methods: readonly string[],
  flags: readonly F[] = [],
): { ok: true; ref: TargetRef; flags: QueryFlags<F> } | { ok: false; response: HttpResponseInit } {
  const refuse = (p: Parameters<typeof problemResponse>[0]) => ({ ok: false as const, response: problemResponse(p) });
  const auth = authorize(request.headers, s.config, ROLES.read);
  if (!auth.ok) return refuse(auth.problem);
  if (request.method !== "GET") return refuse(methodNotAllowed(request.method, methods));
  const read = readQueryFlags(request.query, ["targetId", ...flags]);
  if (!read.ok) return refuse(read.problem);
  const raw = read.value.targetId;
  if (raw === null || raw === "")
    return refuse(problem(400, "missing_query", "targetId: is required (a scale set or VM ID)", "targetId"));
  const ref = parseTargetId(raw);
  if (!ref.ok) return refuse(problem(400, "invalid_field", `targetId: ${ref.reason}`, "targetId"));
  if (!inScopes(s.config.scopes, ref.value.subscriptionId, ref.value.resourceGroup))
    return refuse(scopeProblem("targetId", ref.value.id, s.config.scopes));
  return { ok: true, ref: ref.value, flags: read.value };
}
