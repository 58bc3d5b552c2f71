import { DeclarationContendedError, type Declaration, type DeclaredBy } from "../core/declarations";
import type { DeclarationStore, Logger } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import type { DeclareRequest } from "./declareRequest";
import { capRefusal } from "../core/declarationCap";
import { problem, type Problem } from "./problem";

export interface AcceptDeps {
  declarations: Pick<DeclarationStore, "upsert" | "listForTarget">;
  /** Asks for the reconcile: gathered with the scale set's other declarations when the declare window is on. */
  scheduleDeclared(ref: TargetRef, claimant: string, reason: string): Promise<unknown>;
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
  declaredBy: DeclaredBy;
  status: "accepted";
  /** false when the declaration is stored but the reconcile could not be queued: the timer picks it up. */
  queued: boolean;
}

/** A new `present` beyond the target's or the caller's share of the cap (core/declarationCap): the reason names it. */
export const overCapProblem = (reason: string): Problem => problem(429, "too_many_declarations", reason);

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
    declaredAt: new Date(deps.now()).toISOString(),
    requestId: deps.newRequestId(),
    declaredBy: { id: caller.id, name: caller.name, via: caller.via },
  };
  let upserted;
  try {
    const listed = await deps.declarations.listForTarget(req.target);
    const refused = capRefusal(listed, declaration);
    if (refused) {
      deps.log.warn("intake.over-cap", {
        scaleSetId: req.target.id,
        backendPoolId: req.pool.id,
        declaredBy: caller.id,
        reason: refused,
      });
      return { ok: false, problem: overCapProblem(refused) };
    }
    upserted = await deps.declarations.upsert(req.target, declaration, listed);
  } catch (err) {
    if (err instanceof DeclarationContendedError) {
      // Others wrote the row at every try: a race poolsync settles by trying again, never "storage unavailable".
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
  if (upserted.result === "older") return { ok: false, problem: supersededProblem(upserted.stored) };
  let queued = true;
  try {
    await deps.scheduleDeclared(req.target, declaration.requestId, DECLARED_REASON);
  } catch (err) {
    queued = false;
    deps.log.warn("intake.enqueue-failed", {
      scaleSetId: req.target.id,
      requestId: declaration.requestId,
      error: (err as Error).message,
    });
  }
  deps.log.info("intake.declared", {
    scaleSetId: req.target.id,
    backendPoolId: req.pool.id,
    ipConfiguration: req.ipConfiguration,
    state: req.state,
    requestId: declaration.requestId,
    declaredBy: caller.id,
    via: caller.via,
    result: upserted.result,
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
      declaredBy: declaration.declaredBy,
      status: "accepted",
      queued,
    },
  };
}
