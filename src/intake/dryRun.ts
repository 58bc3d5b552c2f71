import type { Declaration, DeclaredBy } from "../core/declarations";
import type { TargetRef } from "../core/resourceIds";
import type { DeclaredResult } from "../core/targetPasses";
import { overCapProblem, supersededProblem } from "./acceptDeclaration";
import { kindAnswerOf, kindFieldsOf, type DeclareRequest } from "./declareRequest";
import { jsonResponse, problem, problemResponse } from "./problem";

/** What a dry run and the plan route need of the app: the reconcile's plan, which reads but never writes. */
export interface PlanPort {
  plan(ref: TargetRef, extra?: Declaration): Promise<unknown>;
}

/**
 * `?dryRun=true` (or `1`): validate and plan, store and enqueue nothing. Anything else but false/0/absent is refused.
 */
export function dryRunOf(raw: string | null): boolean | "invalid" {
  if (raw === null || raw === "" || raw === "false" || raw === "0") return false;
  return raw === "true" || raw === "1" ? true : "invalid";
}

/**
 * The declaration a real PUT would store, and the plan of the target with it in place of the stored one of its
 * key: validated exactly as a real declaration (the caller has passed the same parse, scopes, bindings and role), and
 * refused as the real one would be: beyond the cap (429, naming it), or older than the one stored (409).
 */
export async function dryRunDeclaration(
  req: DeclareRequest,
  caller: DeclaredBy,
  deps: PlanPort & {
    now: () => number;
    /** What storing it would answer, reading as the intake does and writing nothing. */
    preview(ref: TargetRef, d: Declaration): Promise<DeclaredResult>;
  },
): Promise<ReturnType<typeof jsonResponse>> {
  const declaration: Declaration = {
    scaleSetId: req.target.id,
    backendPoolId: req.pool.id,
    ipConfiguration: req.ipConfiguration,
    ...(req.ipVersion ? { ipVersion: req.ipVersion } : {}),
    state: req.state,
    ...kindFieldsOf(req),
    declaredAt: new Date(deps.now()).toISOString(),
    requestId: "dry-run",
    declaredBy: { id: caller.id, name: caller.name, via: caller.via },
  };
  const would = await deps.preview(req.target, declaration);
  if (would.result === "refused") return problemResponse(overCapProblem(would.cap, would.reason));
  if (would.result === "older") return problemResponse(supersededProblem(would.stored));
  const plan = await deps.plan(req.target, declaration);
  return jsonResponse(200, {
    dryRun: true,
    wouldStore: {
      targetId: req.target.id,
      backendPoolId: req.pool.id,
      ipConfiguration: req.ipVersion ? null : req.ipConfiguration || null,
      ...(req.ipVersion ? { ipVersion: req.ipVersion } : {}),
      state: req.state,
      ...kindAnswerOf(req),
      declaredBy: declaration.declaredBy,
    },
    plan,
  });
}

export const dryRunProblem = () =>
  problemResponse(problem(400, "invalid_field", "dryRun: must be true or false", "dryRun"));
