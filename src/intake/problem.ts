import type { HttpResponseInit } from "@azure/functions";

/**
 * Every refusal the HTTP API gives has one shape, `{ "error": { "code", "message", "field"? } }`, so a caller (the
 * CLI, a script) can branch on `code` and show `message` as is. `message` is "field: reason", as on the queue.
 */
export interface Problem {
  status: number;
  code: ProblemCode;
  message: string;
  field?: string;
  headers?: Record<string, string>;
  /** ARM's own answer, when ARM's trouble is why (the plan's reads): its status and error code. */
  arm?: { status?: number; code?: string };
}

export type ProblemCode =
  | "invalid_json"
  | "not_an_object"
  | "unknown_field"
  | "missing_field"
  | "invalid_field"
  | "missing_query"
  | "repeated_parameter"
  | "out_of_scope"
  | "unauthenticated"
  | "too_many_declarations"
  | "missing_role"
  | "binding_refused"
  | "method_not_allowed"
  | "not_found"
  | "body_too_large"
  | "unsupported_media_type"
  | "superseded"
  | "contended"
  | "storage_unavailable"
  | "arm_error"
  | "arm_unavailable"
  | "arm_throttled";

export function problem(
  status: number,
  code: ProblemCode,
  message: string,
  field?: string,
  headers?: Record<string, string>,
): Problem {
  return { status, code, message, ...(field !== undefined ? { field } : {}), ...(headers ? { headers } : {}) };
}

export function problemResponse(p: Problem): HttpResponseInit {
  return jsonResponse(
    p.status,
    {
      error: {
        code: p.code,
        message: p.message,
        ...(p.field !== undefined ? { field: p.field } : {}),
        ...(p.arm ? { arm: p.arm } : {}),
      },
    },
    p.headers,
  );
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponseInit {
  // Never cached: what these answers say changes with every reconcile.
  return {
    status,
    jsonBody: body,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  };
}

export function methodNotAllowed(method: string, allowed: readonly string[]): Problem {
  return problem(
    405,
    "method_not_allowed",
    `method ${method} is not allowed here; use ${allowed.join(" or ")}`,
    undefined,
    { allow: allowed.join(", ") },
  );
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: Problem };
