import { problem, type Problem } from "./problem";

/**
 * Who is calling the HTTP API. In Azure, App Service authentication (Microsoft Entra ID) validates the token before
 * the request reaches the host, strips any `x-ms-client-principal*` header the client sent, and adds its own: base64
 * JSON `{ auth_typ, name_typ, role_typ, claims: [{ typ, val }] }`. So the header is trusted only with POOLSYNC_AUTH
 * `entra`, where the template turns that authentication on; with `key` the host checked a function key, which says
 * nothing about who holds it.
 */

export const ROLES = { read: "poolsync.Read", declare: "poolsync.Declare" } as const;
export type Role = (typeof ROLES)[keyof typeof ROLES];

export interface Caller {
  /** Entra object id (or app id of a service principal); "function-key" or "queue" otherwise. */
  id: string;
  name: string;
  via: "entra" | "key" | "queue";
}

export const KEY_CALLER: Caller = { id: "function-key", name: "function key holder", via: "key" };

const OID = ["http://schemas.microsoft.com/identity/claims/objectidentifier", "oid"];
const APP_ID = ["appid", "azp"];
const NAME = [
  "name",
  "preferred_username",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
];
const ROLE = ["roles", "http://schemas.microsoft.com/ws/2008/06/identity/claims/role"];

/** A principal header is a few KiB at most; anything far bigger is refused unread. */
const MAX_PRINCIPAL_CHARS = 16 * 1024;

interface ClientPrincipal {
  id: string;
  name: string;
  roles: string[];
}

type Headers = { get(name: string): string | null };

export function parseClientPrincipal(
  header: string,
): { ok: true; value: ClientPrincipal } | { ok: false; reason: string } {
  if (header.length > MAX_PRINCIPAL_CHARS)
    return { ok: false, reason: `x-ms-client-principal is over ${MAX_PRINCIPAL_CHARS} characters` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  } catch {
    return { ok: false, reason: "x-ms-client-principal is not base64 of a JSON object" };
  }
  const p = parsed as { claims?: unknown; name_typ?: unknown; role_typ?: unknown };
  if (typeof parsed !== "object" || parsed === null || !Array.isArray(p.claims))
    return { ok: false, reason: "x-ms-client-principal has no claims array" };
  const claims = (p.claims as unknown[]).flatMap((c) => {
    const claim = c as { typ?: unknown; val?: unknown };
    return typeof claim?.typ === "string" && typeof claim.val === "string" ? [{ typ: claim.typ, val: claim.val }] : [];
  });
  const first = (types: string[]) => claims.find((c) => types.includes(c.typ))?.val;
  const roleTypes = typeof p.role_typ === "string" ? [...ROLE, p.role_typ] : ROLE;
  const nameTypes = typeof p.name_typ === "string" ? [p.name_typ, ...NAME] : NAME;
  const id = first(OID) ?? first(APP_ID);
  if (!id) return { ok: false, reason: "x-ms-client-principal names no object id (oid) or app id" };
  return {
    ok: true,
    value: {
      id,
      name: first(nameTypes) ?? first(APP_ID) ?? id,
      roles: claims.filter((c) => roleTypes.includes(c.typ)).map((c) => c.val),
    },
  };
}

/** The caller, if allowed `role`; else the 401 or 403 to answer. Never echoes a key or a token. */
export function authorize(
  headers: Headers,
  auth: { auth: "entra" | "key"; authUnprotected?: string },
  role: Role,
): { ok: true; caller: Caller } | { ok: false; problem: Problem } {
  if (auth.auth === "key") return { ok: true, caller: KEY_CALLER };
  if (auth.authUnprotected)
    return {
      ok: false,
      problem: problem(503, "unauthenticated", `callers cannot be told apart: ${auth.authUnprotected}`),
    };
  const header = headers.get("x-ms-client-principal");
  if (!header) {
    return {
      ok: false,
      problem: problem(
        401,
        "unauthenticated",
        "no signed-in caller: sign in with Microsoft Entra ID (App Service authentication adds x-ms-client-principal)",
        undefined,
        { "www-authenticate": "Bearer" },
      ),
    };
  }
  const principal = parseClientPrincipal(header);
  if (!principal.ok) return { ok: false, problem: problem(401, "unauthenticated", principal.reason) };
  if (!principal.value.roles.includes(role)) {
    return {
      ok: false,
      problem: problem(
        403,
        "missing_role",
        `${principal.value.name} (${principal.value.id}) lacks the app role ${role}`,
      ),
    };
  }
  return { ok: true, caller: { id: principal.value.id, name: principal.value.name, via: "entra" } };
}
