import { randomUUID } from "node:crypto";
import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { parseScaleSetId, parseTargetId } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { acceptDeclaration } from "./acceptDeclaration";
import { armProblem } from "./armProblem";
import { parseDeclareRequest, scopeProblem } from "./declareRequest";
import { isStorageFailure, type IntakeServices } from "./intakeServices";
import { readJsonBody, type BodySource } from "./jsonBody";
import { jsonResponse, methodNotAllowed, problem, problemResponse } from "./problem";
import { authorize, ROLES, type Caller } from "./principal";
import { loadScaleSetView } from "./scaleSetView";
import { dryRunDeclaration, dryRunOf, dryRunProblem } from "./dryRun";
import { readQueryFlags, type QueryFlags } from "./queryFlags";

export const MEMBERSHIPS_METHODS = ["GET", "PUT"] as const;
const FLAGS = ["targetId", "scaleSetId", "dryRun"] as const;
type Flags = QueryFlags<(typeof FLAGS)[number]>;

type Request = BodySource & Pick<HttpRequest, "method" | "query" | "url">;

/**
 * `PUT` declares (app role poolsync.Declare), `GET` shows (poolsync.Read); any other method is answered 405 with
 * Allow rather than left to a bare 404. The caller is checked first: an unknown caller learns nothing else. A dry run
 * needs both roles: it is validated as the declaration it stands for (Declare), and it answers the target's plan,
 * which shows the declarations stored on it and what ARM holds (Read, as GET /api/plan).
 */
export async function handleMemberships(request: Request, s: IntakeServices): Promise<HttpResponseInit> {
  const auth = authorize(request.headers, s.config, request.method === "PUT" ? ROLES.declare : ROLES.read);
  if (!auth.ok) {
    s.log.warn("intake.unauthorized", {
      method: request.method,
      status: auth.problem.status,
      reason: auth.problem.message,
    });
    return problemResponse(auth.problem);
  }
  if (request.method !== "PUT" && request.method !== "GET")
    return problemResponse(methodNotAllowed(request.method, MEMBERSHIPS_METHODS));
  const flags = readQueryFlags(request.query, FLAGS);
  if (!flags.ok) return problemResponse(flags.problem);
  const dryRun = request.method === "PUT" ? dryRunOf(flags.value.dryRun) : false;
  if (dryRun === "invalid") return dryRunProblem();
  if (dryRun) {
    const reader = authorize(request.headers, s.config, ROLES.read);
    if (!reader.ok) {
      const why = `${reader.problem.message} (a dry run answers the target's plan, which poolsync.Read guards)`;
      s.log.warn("intake.unauthorized", { method: request.method, status: reader.problem.status, reason: why });
      return problemResponse({ ...reader.problem, message: why });
    }
  }
  try {
    if (request.method === "PUT") return await declare(request, s, auth.caller, dryRun);
    return await show(s, flags.value);
  } catch (err) {
    // Only a dry run reads ARM (its plan): ARM's trouble is told as such, never as storage's.
    const arm = armProblem(err);
    if (arm) {
      s.log.warn("intake.arm-error", { method: request.method, status: arm.status, error: (err as Error).message });
      return problemResponse(arm);
    }
    if (!isStorageFailure(err)) throw err;
    s.log.error("intake.storage-error", { method: request.method, error: (err as Error).message });
    // The storage error is in the log, not the answer: it can name accounts, endpoints and request ids.
    return problemResponse(
      problem(503, "storage_unavailable", "storage is unavailable; try again", undefined, { "retry-after": "5" }),
    );
  }
}

async function declare(
  request: Request,
  s: IntakeServices,
  caller: Caller,
  dryRun: boolean,
): Promise<HttpResponseInit> {
  const body = await readJsonBody(request);
  if (!body.ok) return problemResponse(body.problem);
  const parsed = parseDeclareRequest(body.value, s.config.scopes, s.config.bindings);
  if (!parsed.ok) return problemResponse(parsed.problem);
  await s.ready();
  if (dryRun) {
    // Never a real declaration in its place: a host that cannot plan says so.
    if (!s.plan) return problemResponse(problem(503, "storage_unavailable", "planning is not available on this host"));
    return dryRunDeclaration(parsed.value, caller, {
      plan: s.plan,
      now: s.clock.now,
      preview: s.previewDeclare,
    });
  }
  const accepted = await acceptDeclaration(parsed.value, caller, {
    declare: s.declare,
    log: s.log,
    now: s.clock.now,
    newRequestId: randomUUID,
  });
  if (!accepted.ok) return problemResponse(accepted.problem);
  // Where to watch it: this same route (whatever the host's route prefix), GET with the scale set.
  const location = `${new URL(request.url).pathname}?${parsed.value.targetField}=${encodeURIComponent(accepted.value.targetId)}`;
  return jsonResponse(202, accepted.value, { location });
}

async function show(s: IntakeServices, flags: Flags): Promise<HttpResponseInit> {
  // targetId= names a scale set or a VM; scaleSetId= (a scale set only) is kept as it always was.
  const field = flags.targetId !== null ? "targetId" : "scaleSetId";
  const raw = flags.targetId ?? flags.scaleSetId;
  if (raw === null || raw === "") {
    return problemResponse(
      problem(
        400,
        "missing_query",
        "targetId: is required (?targetId=/subscriptions/…/virtualMachineScaleSets/… or …/virtualMachines/…; or ?scaleSetId=)",
        "targetId",
      ),
    );
  }
  const ref = field === "targetId" ? parseTargetId(raw) : parseScaleSetId(raw);
  if (!ref.ok) return problemResponse(problem(400, "invalid_field", `${field}: ${ref.reason}`, field));
  if (!inScopes(s.config.scopes, ref.value.subscriptionId, ref.value.resourceGroup))
    return problemResponse(scopeProblem(field, ref.value.id, s.config.scopes));
  await s.ready();
  const view = await loadScaleSetView(ref.value, {
    declarations: s.declarations,
    cache: s.cache,
    now: s.clock.now,
    cacheTtlMs: s.config.cacheTtlMs,
    drifts: s.drifts,
  });
  return jsonResponse(200, { targetId: view.scaleSetId, targetKind: ref.value.kind, ...view });
}
