import { describe, expect, it } from "vitest";
import { authorize, KEY_CALLER, parseClientPrincipal, ROLES } from "../../src/intake/principal";

/**
 * src/intake/principal.ts: who calls the API, from the principal App Service authentication adds (with POOLSYNC_AUTH
 * entra), and whether that caller holds the app role the route needs.
 */
const principal = (body: unknown) => Buffer.from(JSON.stringify(body), "utf8").toString("base64");
const headers = (value?: string) => ({ get: (n: string) => (n === "x-ms-client-principal" ? (value ?? null) : null) });
const ENTRA = { auth: "entra" as const };
const alice = principal({
  auth_typ: "aad",
  name_typ: "name",
  role_typ: "roles",
  claims: [
    { typ: "http://schemas.microsoft.com/identity/claims/objectidentifier", val: "oid-alice" },
    { typ: "name", val: "Alice" },
    { typ: "roles", val: ROLES.read },
  ],
});

describe("parseClientPrincipal", () => {
  it("reads the object id, the name and the roles from the claims", () => {
    expect(parseClientPrincipal(alice)).toEqual({
      ok: true,
      value: { id: "oid-alice", name: "Alice", roles: [ROLES.read] },
    });
  });

  it("names a service principal by its app id when it has no name claim", () => {
    const app = principal({
      claims: [
        { typ: "azp", val: "app-123" },
        { typ: "roles", val: ROLES.declare },
      ],
    });
    expect(parseClientPrincipal(app)).toEqual({
      ok: true,
      value: { id: "app-123", name: "app-123", roles: [ROLES.declare] },
    });
  });

  it("refuses a header that is not a principal, saying why", () => {
    expect(parseClientPrincipal("%%%")).toEqual({
      ok: false,
      reason: "x-ms-client-principal is not base64 of a JSON object",
    });
    expect(parseClientPrincipal(principal({ name_typ: "name" }))).toEqual({
      ok: false,
      reason: "x-ms-client-principal has no claims array",
    });
    expect(parseClientPrincipal(principal({ claims: [{ typ: "name", val: "n" }] }))).toEqual({
      ok: false,
      reason: "x-ms-client-principal names no object id (oid) or app id",
    });
    expect(parseClientPrincipal("a".repeat(20_000))).toMatchObject({ ok: false, reason: /over 16384 characters/ });
  });
});

describe("authorize", () => {
  it("lets an Entra caller with the role through, as itself", () => {
    expect(authorize(headers(alice), ENTRA, ROLES.read)).toEqual({
      ok: true,
      caller: { id: "oid-alice", name: "Alice", via: "entra" },
    });
  });

  it("answers 403 naming the caller and the role it lacks", () => {
    const r = authorize(headers(alice), ENTRA, ROLES.declare);
    expect(r).toMatchObject({ ok: false, problem: { status: 403, code: "missing_role" } });
    expect(!r.ok && r.problem.message).toBe("Alice (oid-alice) lacks the app role poolsync.Declare");
  });

  it("answers 401 with a Bearer challenge when nobody signed in, and 503 when callers cannot be told apart", () => {
    expect(authorize(headers(), ENTRA, ROLES.read)).toMatchObject({
      ok: false,
      problem: { status: 401, code: "unauthenticated", headers: { "www-authenticate": "Bearer" } },
    });
    const open = authorize(
      headers(alice),
      { auth: "entra", authUnprotected: "App Service authentication is off" },
      ROLES.read,
    );
    expect(open).toMatchObject({ ok: false, problem: { status: 503 } });
  });

  it("trusts no principal header with a function key: the caller is the key's holder", () => {
    expect(authorize(headers(alice), { auth: "key" }, ROLES.declare)).toEqual({ ok: true, caller: KEY_CALLER });
  });
});
