import { randomUUID } from "node:crypto";
import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { z } from "zod";
import { checkBinding, type BindingRule } from "../core/bindings";
import type { Declaration, DeclaredBy } from "../core/declarations";
import { formatIssues } from "../core/messages";
import { kindProblem } from "../core/poolKinds";
import {
  parseBackendPoolId,
  parseTargetId,
  sameResource,
  type BackendPoolRef,
  type TargetRef,
} from "../core/resourceIds";
import { inScopes, type Scope } from "../core/scopes";
import { DeclarationContendedError } from "../core/declarations";
import { overCapProblem, supersededProblem, DECLARED_REASON } from "./acceptDeclaration";
import { declareRequestSchema, scopeProblem } from "./declareRequest";
import { isStorageFailure, type IntakeServices } from "./intakeServices";
import { readJsonBody, type BodySource } from "./jsonBody";
import { authorize, ROLES } from "./principal";
import { jsonResponse, methodNotAllowed, problem, problemResponse, type Parsed } from "./problem";

/**
 * `PUT /api/memberships/move` (issue 43): a target leaves one pool for another in one write per resource. Stored as
 * two declarations of the target in one transaction, so one pass reads both: `to` present, and `from` absent as the
 * other half of the move (`movedTo`), which the edit applies only where `to` landed, in the same write. No moment
 * holds neither pool; if `to` cannot be placed, `from` stays.
 */

const MOVE_METHODS = ["PUT"] as const;
const base = declareRequestSchema.shape;

export const moveRequestSchema = z
  .strictObject(
    {
      targetId: base.targetId,
      scaleSetId: base.scaleSetId,
      from: base.backendPoolId,
      to: base.backendPoolId,
      ipConfiguration: base.ipConfiguration,
      ipVersion: base.ipVersion,
    },
    { error: (iss) => (iss.code === "invalid_type" ? "body must be a JSON object" : undefined) },
  )
  .superRefine((b, ctx) => {
    if (b.scaleSetId === undefined && b.targetId === undefined)
      ctx.addIssue({ code: "custom", path: ["targetId"], message: "is required (or scaleSetId)" });
    if (b.scaleSetId !== undefined && b.targetId !== undefined)
      ctx.addIssue({ code: "custom", path: ["targetId"], message: "give targetId or scaleSetId, not both" });
    if (b.ipVersion !== undefined && b.ipConfiguration != null)
      ctx.addIssue({ code: "custom", path: ["ipVersion"], message: "give ipVersion or ipConfiguration, not both" });
  });

export interface MoveRequest {
  target: TargetRef;
  from: BackendPoolRef;
  to: BackendPoolRef;
  ipConfiguration: string;
  ipVersion?: "IPv4" | "IPv6";
}

export function parseMoveRequest(
  body: unknown,
  scopes: readonly Scope[],
  bindings: readonly BindingRule[],
): Parsed<MoveRequest> {
  const parsed = moveRequestSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field = first?.code === "unrecognized_keys" ? first.keys[0] : first?.path.join(".");
    const code = first?.code === "unrecognized_keys" ? "unknown_field" : "invalid_field";
    return { ok: false, problem: problem(400, code, formatIssues(parsed.error), field || undefined) };
  }
  const b = parsed.data;
  const target = parseTargetId(b.targetId ?? b.scaleSetId);
  const from = parseBackendPoolId(b.from);
  const to = parseBackendPoolId(b.to);
  if (!target.ok || !from.ok || !to.ok) throw new Error("unreachable: the schema validated the IDs");
  const field = b.targetId !== undefined ? "targetId" : "scaleSetId";
  if (!inScopes(scopes, target.value.subscriptionId, target.value.resourceGroup))
    return { ok: false, problem: scopeProblem(field, target.value.id, scopes) };
  if (sameResource(from.value.id, to.value.id))
    return { ok: false, problem: problem(400, "invalid_field", "to: is the pool it moves from", "to") };
  if (from.value.poolKind !== to.value.poolKind)
    return {
      ok: false,
      problem: problem(
        400,
        "invalid_field",
        "to: a move goes between two pools of one kind (one ip configuration field)",
        "to",
      ),
    };
  for (const [name, pool] of [
    ["from", from.value],
    ["to", to.value],
  ] as const) {
    if (!inScopes(scopes, pool.subscriptionId, pool.resourceGroup))
      return { ok: false, problem: scopeProblem(name, pool.id, scopes) };
    const binding = checkBinding(bindings, target.value.id, pool.id);
    if (!binding.allowed)
      return { ok: false, problem: problem(403, "binding_refused", `${name}: ${binding.reason}`, name) };
    const kinds = kindProblem({ target: target.value, poolKind: pool.poolKind, state: "present" });
    if (kinds) return { ok: false, problem: problem(400, "invalid_field", `${name}: ${kinds.reason}`, name) };
  }
  return {
    ok: true,
    value: {
      target: target.value,
      from: from.value,
      to: to.value,
      ipConfiguration: b.ipVersion ? "" : (b.ipConfiguration ?? ""),
      ...(b.ipVersion ? { ipVersion: b.ipVersion } : {}),
    },
  };
}

/** Long: one HTTP handler: the move's validation, its two declarations and its answer. */
export async function handleMove(
  request: BodySource & Pick<HttpRequest, "method" | "url">,
  s: IntakeServices,
): Promise<HttpResponseInit> {
  const auth = authorize(request.headers, s.config, ROLES.declare);
  if (!auth.ok) return problemResponse(auth.problem);
  if (request.method !== "PUT") return problemResponse(methodNotAllowed(request.method, MOVE_METHODS));
  const body = await readJsonBody(request);
  if (!body.ok) return problemResponse(body.problem);
  const parsed = parseMoveRequest(body.value, s.config.scopes, s.config.bindings);
  if (!parsed.ok) return problemResponse(parsed.problem);
  const m = parsed.value;
  const caller: DeclaredBy = { id: auth.caller.id, name: auth.caller.name, via: auth.caller.via };
  const at = new Date(s.clock.now()).toISOString();
  const common = {
    scaleSetId: m.target.id,
    ipConfiguration: m.ipConfiguration,
    ...(m.ipVersion ? { ipVersion: m.ipVersion } : {}),
    declaredAt: at,
    declaredBy: caller,
  };
  const to: Declaration = { ...common, backendPoolId: m.to.id, state: "present", requestId: randomUUID() };
  const from: Declaration = {
    ...common,
    backendPoolId: m.from.id,
    state: "absent",
    movedTo: m.to.id,
    requestId: randomUUID(),
  };
  try {
    await s.ready();
    // Both in the same turn: the intake stores one target's declarations of one turn in one transaction.
    const [toStored, fromStored] = await Promise.all(
      [to, from].map((declaration) =>
        s.declare({ ref: m.target, declaration, claimant: declaration.requestId, reason: `${DECLARED_REASON}: move` }),
      ),
    );
    for (const r of [toStored, fromStored]) {
      if (r?.result === "refused") return problemResponse(overCapProblem(r.cap, r.reason));
      if (r?.result === "older") return problemResponse(supersededProblem(r.stored));
    }
    s.log.info("intake.moved", { targetId: m.target.id, from: m.from.id, to: m.to.id, declaredBy: caller.id });
    return jsonResponse(202, {
      targetId: m.target.id,
      from: m.from.id,
      to: m.to.id,
      ipConfiguration: m.ipVersion ? null : m.ipConfiguration || null,
      ...(m.ipVersion ? { ipVersion: m.ipVersion } : {}),
      requestIds: { to: to.requestId, from: from.requestId },
      declaredBy: caller,
      status: "accepted",
    });
  } catch (err) {
    if (err instanceof DeclarationContendedError)
      return problemResponse(
        problem(409, "contended", `${err.message} (nothing was accepted)`, undefined, { "retry-after": "1" }),
      );
    if (!isStorageFailure(err)) throw err;
    s.log.error("intake.storage-error", { method: request.method, error: (err as Error).message });
    return problemResponse(
      problem(503, "storage_unavailable", "storage is unavailable; try again", undefined, { "retry-after": "5" }),
    );
  }
}

/** `…/memberships/<anything but move>`: no such route. */
export function unknownAction(action: string): HttpResponseInit {
  return problemResponse(
    problem(404, "not_found", `memberships/${action.slice(0, 64)}: no such route (PUT /api/memberships/move moves)`),
  );
}
