import { z } from "zod";
import { declareMessageV1, formatIssues } from "../core/messages";
import { checkBinding, type BindingRule } from "../core/bindings";
import {
  parseBackendPoolId,
  parseScaleSetId,
  parseTargetId,
  type BackendPoolRef,
  type TargetRef,
} from "../core/resourceIds";
import { inScopes, type Scope } from "../core/scopes";
import { ADMIN_STATES, kindProblem, type AdminState } from "../core/poolKinds";
import { adminInstancesSchema } from "../core/messages";
import { problem, type Parsed, type ProblemCode } from "./problem";

/**
 * The body of `PUT /api/memberships`. The IDs and the ip configuration are checked by the same rules as a queue
 * `declare` message, so whatever the API accepts the queue trigger would accept too, and the reasons read alike.
 */

const required = (what: string) => (iss: { input: unknown }) => (iss.input === undefined ? "is required" : what);

const resourceId = (parse: (v: unknown) => { ok: true } | { ok: false; reason: string }) =>
  z.string({ error: required("must be a string") }).superRefine((v, ctx) => {
    const r = parse(v);
    if (!r.ok) ctx.addIssue({ code: "custom", message: r.reason });
  });

const ipConfiguration = z
  .string({ error: "must be a string, or null for the primary ip configuration" })
  .superRefine((v, ctx) => {
    const r = declareMessageV1.shape.ipConfiguration.safeParse(v);
    if (!r.success)
      ctx.addIssue({ code: "custom", message: r.error.issues[0]?.message ?? "is not a valid ip configuration name" });
  })
  .nullable()
  .optional();

export const declareRequestSchema = z
  .strictObject(
    {
      scaleSetId: resourceId(parseScaleSetId).optional(),
      /** A scale set (Uniform or Flexible) or a VM; scaleSetId stays accepted for scale sets. */
      targetId: resourceId(parseTargetId).optional(),
      backendPoolId: resourceId(parseBackendPoolId),
      ipConfiguration,
      ipVersion: z.enum(["IPv4", "IPv6"], { error: 'must be "IPv4" or "IPv6"' }).optional(),
      state: z.enum(["present", "absent"], { error: required('must be "present" or "absent"') }),
      adminState: z.enum(ADMIN_STATES, { error: `must be one of ${ADMIN_STATES.join(", ")}` }).optional(),
      instances: adminInstancesSchema.optional(),
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

export interface DeclareRequest {
  /** The scale set or VM declared. */
  target: TargetRef;
  /** Which field named it, for messages that echo the caller's words. */
  targetField: "scaleSetId" | "targetId";
  pool: BackendPoolRef;
  /**
   * "" = the primary ip configuration of the primary NIC (or, with ipVersion, the primary NIC's one of that version).
   */
  ipConfiguration: string;
  ipVersion?: "IPv4" | "IPv6";
  state: "present" | "absent";
  /** The members' admin state in the pool (issue 43). */
  adminState?: AdminState;
  /** Which members adminState applies to (the body's `instances`); absent: all. */
  adminInstances?: string[];
}

/** The fields a declaration takes from the request beyond pool, ip configuration and state. */
export function kindFieldsOf(req: Pick<DeclareRequest, "adminState" | "adminInstances">) {
  return {
    ...(req.adminState !== undefined ? { adminState: req.adminState } : {}),
    ...(req.adminInstances !== undefined ? { adminInstances: req.adminInstances } : {}),
  };
}

/** The same fields as the API answers them (`instances`, as the request names it). */
export function kindAnswerOf(req: Pick<DeclareRequest, "adminState" | "adminInstances">) {
  return {
    ...(req.adminState !== undefined ? { adminState: req.adminState } : {}),
    ...(req.adminInstances !== undefined ? { instances: req.adminInstances } : {}),
  };
}

function codeOf(issue: z.core.$ZodIssue, body: object): ProblemCode {
  if (issue.code === "unrecognized_keys") return "unknown_field";
  // Zod does not keep the input on its issues; whether the key was there at all tells missing from wrong.
  const key = issue.path[0];
  if (typeof key === "string" && !Object.prototype.hasOwnProperty.call(body, key)) return "missing_field";
  return "invalid_field";
}

const KIND: Record<string, string> = { string: "a string", number: "a number", boolean: "a boolean" };

/** Names the refused ID, not the scopes: a caller has no need to learn every subscription poolsync may touch. */
export function scopeProblem(field: string, id: string, _scopes: readonly Scope[]) {
  return problem(403, "out_of_scope", `${field}: ${id} is outside POOLSYNC_SCOPES`, field);
}

/**
 * Schema, then scopes, then POOLSYNC_BINDINGS: a well-formed declaration for a resource poolsync may not touch, or a
 * pairing no binding rule allows, is 403, not 400.
 * Long: schema, scopes and bindings in the order that decides 400 or 403.
 */
export function parseDeclareRequest(
  body: unknown,
  scopes: readonly Scope[],
  bindings: readonly BindingRule[] = [],
): Parsed<DeclareRequest> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return {
      ok: false,
      problem: problem(
        400,
        "not_an_object",
        `body must be a JSON object, not ${Array.isArray(body) ? "an array" : body === null ? "null" : (KIND[typeof body] ?? typeof body)}`,
      ),
    };
  }
  const parsed = declareRequestSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field = first?.code === "unrecognized_keys" ? first.keys[0] : first?.path.join(".");
    return {
      ok: false,
      problem: problem(
        400,
        first ? codeOf(first, body) : "invalid_field",
        formatIssues(parsed.error),
        field || undefined,
      ),
    };
  }
  const field = parsed.data.targetId !== undefined ? "targetId" : "scaleSetId";
  const scaleSet = parseTargetId(parsed.data.targetId ?? parsed.data.scaleSetId);
  const pool = parseBackendPoolId(parsed.data.backendPoolId);
  if (!scaleSet.ok || !pool.ok) throw new Error("unreachable: the schema validated both IDs");
  if (!inScopes(scopes, scaleSet.value.subscriptionId, scaleSet.value.resourceGroup)) {
    return { ok: false, problem: scopeProblem(field, scaleSet.value.id, scopes) };
  }
  if (!inScopes(scopes, pool.value.subscriptionId, pool.value.resourceGroup)) {
    return { ok: false, problem: scopeProblem("backendPoolId", pool.value.id, scopes) };
  }
  const kinds = kindProblem({
    target: scaleSet.value,
    poolKind: pool.value.poolKind,
    state: parsed.data.state,
    adminState: parsed.data.adminState,
    adminInstances: parsed.data.instances,
  });
  if (kinds)
    return { ok: false, problem: problem(400, "invalid_field", `${kinds.field}: ${kinds.reason}`, kinds.field) };
  const binding = checkBinding(bindings, scaleSet.value.id, pool.value.id);
  if (!binding.allowed)
    return { ok: false, problem: problem(403, "binding_refused", `backendPoolId: ${binding.reason}`, "backendPoolId") };
  const { ipVersion } = parsed.data;
  return {
    ok: true,
    value: {
      target: scaleSet.value,
      targetField: field,
      pool: pool.value,
      ipConfiguration: ipVersion ? "" : (parsed.data.ipConfiguration ?? ""),
      ...(ipVersion ? { ipVersion } : {}),
      state: parsed.data.state,
      ...kindFieldsOf({ adminState: parsed.data.adminState, adminInstances: parsed.data.instances }),
    },
  };
}
