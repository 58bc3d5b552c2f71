import { DeclarationContendedError, type Declaration, type DeclaredBy } from "../core/declarations";
import type { Logger } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import type { DeclaredResult } from "../core/targetPasses";
import { kindAnswerOf, kindFieldsOf, type DeclareRequest } from "./declareRequest";
import { problem, type Problem } from "./problem";

/** Stores a declaration (batched with others of its target) and schedules its pass; `scheduled` undefined: none. */
export type IntakeDeclare = (req: {
  ref: TargetRef;
  declaration: Declaration;
  claimant: string;
  reason: string;
}) => Promise<DeclaredResult & { scheduled?: string }>;

export interface AcceptDeps {
  declare: IntakeDeclare;
  log: Logger;
  now: () => number;
  newRequestId: () => string;
}

export interface Accepted {
  requestId: string;
  /** The target, a scale set or a VM (also as scaleSetId when it is a scale set, as before targets). */
  targetId: string;
  scaleSetId?: string;
  backendPoolId: string;
  /** null = the primary ip configuration (or the one of ipVersion). */
  ipConfiguration: string | null;
  ipVersion?: "IPv4" | "IPv6";
  state: "present" | "absent";
  adminState?: string;
  instances?: string[];
  declaredBy: DeclaredBy;
  status: "accepted";
  /** false when the declaration is stored but the reconcile could not be queued: the timer picks it up. */
  queued: boolean;
}

/** A declaration beyond one of the target's caps (core/declarationCap): the reason names it and the cap. */
export const overCapProblem = (cap: string, reason: string): Problem =>
  problem(429, "too_many_declarations", `${reason} (cap: ${cap})`, undefined, { "retry-after": "60" });

export const supersededProblem = (stored: Pick<Declaration, "declaredAt" | "requestId">): Problem =>
  problem(
    409,
    "superseded",
    `a newer declaration for this pool and ip configuration is stored (declared at ${stored.declaredAt}, request ${stored.requestId})`,
  );

/** Why the API reconciles through the queue rather than in the request: ARM writes are slow, scarce and retried. */
export const DECLARED_REASON = "declared via API";

/**
 * The declaration is written first: the table is the durable intent, the queue only a hint to look soon. So once
 * the row is written the request is accepted, even if the enqueue then fails (the timer's round over declared scale
 * sets finds it); and if the write fails nothing was accepted and the caller is told to retry.
 * Long: the HTTP intake's order matters (validate, store, then enqueue; a write failure means nothing was accepted):
 * one readable sequence.
 */
export async function acceptDeclaration(
  req: DeclareRequest,
  caller: DeclaredBy,
  deps: AcceptDeps,
): Promise<{ ok: true; value: Accepted } | { ok: false; problem: Problem }> {
  const declaration: Declaration = {
    scaleSetId: req.target.id,
    backendPoolId: req.pool.id,
    ipConfiguration: req.ipConfiguration,
    ...(req.ipVersion ? { ipVersion: req.ipVersion } : {}),
    state: req.state,
    ...kindFieldsOf(req),
    declaredAt: new Date(deps.now()).toISOString(),
    requestId: deps.newRequestId(),
    declaredBy: { id: caller.id, name: caller.name, via: caller.via },
  };
  let stored;
  try {
    stored = await deps.declare({
      ref: req.target,
      declaration,
      claimant: declaration.requestId,
      reason: DECLARED_REASON,
    });
  } catch (err) {
    if (err instanceof DeclarationContendedError) {
      // Others wrote the target at every try: a race poolsync settles by trying again, never "storage unavailable".
      deps.log.warn("intake.store-contended", { scaleSetId: req.target.id, backendPoolId: req.pool.id });
      return {
        ok: false,
        problem: problem(409, "contended", `${err.message} (nothing was accepted)`, undefined, { "retry-after": "1" }),
      };
    }
    deps.log.error("intake.store-failed", {
      scaleSetId: req.target.id,
      backendPoolId: req.pool.id,
      error: (err as Error).message,
    });
    return {
      ok: false,
      problem: problem(
        503,
        "storage_unavailable",
        "the declaration could not be stored; nothing was accepted, try again",
        undefined,
        { "retry-after": "5" },
      ),
    };
  }
  if (stored.result === "refused") {
    deps.log.warn("intake.over-cap", {
      scaleSetId: req.target.id,
      backendPoolId: req.pool.id,
      declaredBy: caller.id,
      cap: stored.cap,
      reason: stored.reason,
    });
    return { ok: false, problem: overCapProblem(stored.cap, stored.reason) };
  }
  if (stored.result === "older") return { ok: false, problem: supersededProblem(stored.stored) };
  // Stored; its pass was scheduled with it (the store is the durable intent: a lost enqueue is the timer's to redo).
  const queued = stored.scheduled !== undefined || stored.result === "unchanged";
  deps.log.info("intake.declared", {
    scaleSetId: req.target.id,
    backendPoolId: req.pool.id,
    ipConfiguration: req.ipConfiguration,
    state: req.state,
    requestId: declaration.requestId,
    declaredBy: caller.id,
    via: caller.via,
    result: stored.result,
    queued,
  });
  return {
    ok: true,
    value: {
      requestId: declaration.requestId,
      targetId: req.target.id,
      ...(req.target.kind === "scaleSet" ? { scaleSetId: req.target.id } : {}),
      backendPoolId: req.pool.id,
      ipConfiguration: req.ipVersion ? null : req.ipConfiguration || null,
      ...(req.ipVersion ? { ipVersion: req.ipVersion } : {}),
      state: req.state,
      ...kindAnswerOf(req),
      declaredBy: declaration.declaredBy,
      status: "accepted",
      queued,
    },
  };
}
