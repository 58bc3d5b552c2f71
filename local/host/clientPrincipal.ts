import type { IncomingHttpHeaders } from "node:http";

/**
 * What App Service authentication does in front of the host, played locally: it drops every `x-ms-client-principal*`
 * header a client sent (only the platform may set them) and, for a signed-in caller, adds its own. Locally there is
 * no token to validate, so a test principal stands in for one:
 *
 *   x-test-client-principal: {"id":"<object id>","name":"<display name>","roles":["poolsync.Read"]}
 *
 * becomes the base64 JSON principal App Service sends for Microsoft Entra ID, so the app's role checks run end to end.
 */
export const TEST_PRINCIPAL_HEADER = "x-test-client-principal";

export interface TestPrincipal {
  id: string;
  name: string;
  roles: string[];
}

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((r) => typeof r === "string");

export function parseTestPrincipal(text: string): TestPrincipal | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return `${TEST_PRINCIPAL_HEADER} is not JSON`;
  }
  const p = v as Partial<TestPrincipal>;
  if (typeof v !== "object" || v === null || typeof p.id !== "string" || p.id === "")
    return `${TEST_PRINCIPAL_HEADER}: id is required (a string)`;
  if (p.name !== undefined && typeof p.name !== "string") return `${TEST_PRINCIPAL_HEADER}: name must be a string`;
  if (p.roles !== undefined && !strings(p.roles)) return `${TEST_PRINCIPAL_HEADER}: roles must be an array of strings`;
  return { id: p.id, name: p.name ?? p.id, roles: p.roles ?? [] };
}

/** The principal header as App Service encodes it for an Entra ID caller. */
export function encodeClientPrincipal(p: TestPrincipal): string {
  const claims = [
    { typ: "http://schemas.microsoft.com/identity/claims/objectidentifier", val: p.id },
    { typ: "name", val: p.name },
    ...p.roles.map((r) => ({ typ: "roles", val: r })),
  ];
  return Buffer.from(JSON.stringify({ auth_typ: "aad", name_typ: "name", role_typ: "roles", claims }), "utf8").toString(
    "base64",
  );
}

/**
 * The headers the host sees; or why the request is refused (401), as App Service refuses a bad token. The test
 * principal is honoured only in the runtime's explicit test mode (`testPrincipals`); otherwise it is dropped like any
 * client-sent principal header, and the caller is anonymous.
 */
export function applyAppServiceAuthentication(
  headers: IncomingHttpHeaders,
  testPrincipals = false,
): { headers: IncomingHttpHeaders } | { refused: string } {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers))
    if (!k.toLowerCase().startsWith("x-ms-client-principal") && k.toLowerCase() !== TEST_PRINCIPAL_HEADER) out[k] = v;
  const raw = headers[TEST_PRINCIPAL_HEADER];
  if (raw === undefined || !testPrincipals) return { headers: out };
  const parsed = parseTestPrincipal(Array.isArray(raw) ? raw.join(",") : raw);
  if (typeof parsed === "string") return { refused: parsed };
  out["x-ms-client-principal"] = encodeClientPrincipal(parsed);
  out["x-ms-client-principal-id"] = parsed.id;
  out["x-ms-client-principal-name"] = parsed.name;
  out["x-ms-client-principal-idp"] = "aad";
  return { headers: out };
}
