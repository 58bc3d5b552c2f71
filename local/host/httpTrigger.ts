import type { IncomingHttpHeaders } from "node:http";
import type { RpcHttpCookie, RpcHttpData, RpcInvocationResponse, RpcTypedData } from "./coreTypes";
import type { InvocationInput } from "./invoke";
import { compileRoute, type CompiledRoute } from "./httpRoute";

export interface HttpTarget {
  functionName: string;
  bindingName: string;
  methods: string[];
  route: CompiledRoute;
  /** The trigger's authLevel (anonymous, function, admin), lower case. */
  authLevel: string;
  invoke: (input: InvocationInput) => Promise<RpcInvocationResponse>;
}

export interface HttpResult {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

export function httpTarget(
  functionName: string,
  bindingName: string,
  trigger: { route?: unknown; methods?: unknown; authLevel?: unknown },
  routePrefix: string,
  invoke: HttpTarget["invoke"],
): HttpTarget {
  const route = typeof trigger.route === "string" && trigger.route.length > 0 ? trigger.route : functionName;
  const methods = Array.isArray(trigger.methods)
    ? trigger.methods.map((m) => String(m).toUpperCase())
    : ["GET", "POST"];
  const authLevel = typeof trigger.authLevel === "string" ? trigger.authLevel.toLowerCase() : "function";
  return {
    functionName,
    bindingName,
    methods,
    authLevel,
    route: compileRoute(routePrefix, route.replace(/^\/+/, "")),
    invoke,
  };
}

/** Route precedence like ASP.NET's: literal segments beat parameters, catch-alls come last. */
export function byPrecedence(a: HttpTarget, b: HttpTarget): number {
  const score = (t: HttpTarget) =>
    t.route.template
      .split("/")
      .map((s) => (s.startsWith("{*") ? "3" : s.startsWith("{") ? "2" : "1"))
      .join("");
  return score(a).localeCompare(score(b));
}

/** The request as the host encodes it for the worker; the library builds its HttpRequest from exactly this. */
export function toRpcHttpRequest(
  method: string,
  url: URL,
  headers: IncomingHttpHeaders,
  body: Buffer,
  params: Record<string, string>,
): RpcHttpData {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  // As the host's ToRpcHttp: ASP.NET Core's query collection is keyed case-insensitively (the first casing names the
  // key) and a repeated parameter's values arrive joined with "," (StringValues.ToString()).
  const query: Record<string, string> = {};
  const keyOf = new Map<string, string>();
  for (const [k, v] of url.searchParams) {
    const key = keyOf.get(k.toLowerCase());
    if (key === undefined) {
      keyOf.set(k.toLowerCase(), k);
      query[k] = v;
    } else query[key] = `${query[key]},${v}`;
  }
  return { method, url: url.toString(), headers: flat, query, params, body: { bytes: body } };
}

function cookieHeader(c: RpcHttpCookie): string {
  const parts = [`${c.name ?? ""}=${c.value ?? ""}`];
  if (c.domain?.value) parts.push(`Domain=${c.domain.value}`);
  if (c.path?.value) parts.push(`Path=${c.path.value}`);
  if (c.expires?.value !== undefined && c.expires?.value !== null)
    parts.push(`Expires=${new Date(c.expires.value).toUTCString()}`);
  if (c.maxAge?.value !== undefined && c.maxAge?.value !== null) parts.push(`Max-Age=${c.maxAge.value}`);
  if (c.secure?.value) parts.push("Secure");
  if (c.httpOnly?.value) parts.push("HttpOnly");
  if (c.sameSite === "lax") parts.push("SameSite=Lax");
  else if (c.sameSite === "strict") parts.push("SameSite=Strict");
  else if (c.sameSite === "explicitNone") parts.push("SameSite=None");
  return parts.join("; ");
}

function bodyBytes(data: RpcTypedData | null | undefined): Buffer {
  if (!data) return Buffer.alloc(0);
  if (data.bytes) return Buffer.from(data.bytes);
  if (typeof data.string === "string") return Buffer.from(data.string, "utf8");
  if (typeof data.json === "string") return Buffer.from(data.json, "utf8");
  return Buffer.alloc(0);
}

/**
 * The worker's response back into HTTP: the `$return` http binding (what `app.http` always declares), else an
 * http output binding. A handler that returned nothing gets 204 No Content.
 */
export function fromRpcHttpResponse(response: RpcInvocationResponse): HttpResult {
  const http = response.returnValue?.http ?? response.outputData?.find((o) => o.data?.http)?.data?.http;
  if (!http) return { status: 204, headers: [], body: Buffer.alloc(0) };
  const headers: [string, string][] = Object.entries(http.headers ?? {}).map(([k, v]) => [k, String(v)]);
  for (const c of http.cookies ?? []) headers.push(["set-cookie", cookieHeader(c)]);
  const status = Number(http.statusCode ?? 200);
  return { status: Number.isInteger(status) && status >= 100 ? status : 200, headers, body: bodyBytes(http.body) };
}
