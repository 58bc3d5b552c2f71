/**
 * The CLI's only way in: the same HTTP API a script would use, with the function key as the host expects it
 * (x-functions-key). Failures come back typed, so main can pick the exit code and print one clear line.
 */

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export class UnreachableError extends Error {
  override name = "UnreachableError";
}

export interface ClientOptions {
  url: string;
  key?: string;
  /** An Entra access token for the app registration (App Service authentication). */
  token?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "[::1]" || h === "::1" || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/** The key and token never follow a redirect to another origin: redirects are followed by hand, same origin only. */
async function sendFollowingSameOrigin(send: typeof fetch, url: URL, init: RequestInit): Promise<Response> {
  let at = url;
  for (let hop = 0; hop <= 5; hop++) {
    const res = await send(at, { ...init, redirect: "manual" });
    const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : null;
    if (!location) return res;
    const next = new URL(location, at);
    if (next.origin !== url.origin)
      throw new UnreachableError(
        `poolsync at ${url.origin} redirected to ${next.origin}; not following it with credentials`,
      );
    at = next;
  }
  throw new UnreachableError(`poolsync at ${url.origin} redirected more than 5 times`);
}

/** Long: one HTTP call with its redirects, auth and every error the CLI tells apart. */
export async function callApi(
  opts: ClientOptions,
  method: "GET" | "PUT",
  path: string,
  body?: unknown,
): Promise<unknown> {
  const url = new URL(path, opts.url.endsWith("/") ? opts.url : `${opts.url}/`);
  const headers: Record<string, string> = { accept: "application/json" };
  if (opts.key) headers["x-functions-key"] = opts.key;
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  if ((opts.key || opts.token) && url.protocol !== "https:" && !isLoopbackHost(url.hostname)) {
    throw new UnreachableError(
      `refusing to send a key or token to ${url.origin} over plain http: use https (http only for 127.0.0.1, ::1, localhost)`,
    );
  }
  let res: Response;
  try {
    res = await sendFollowingSameOrigin(opts.fetch ?? fetch, url, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    });
  } catch (err) {
    if (err instanceof UnreachableError) throw err;
    const why = (err as Error).name === "TimeoutError" ? "timed out" : describeCause(err);
    throw new UnreachableError(
      `cannot reach poolsync at ${url.origin} (${why}); is it running? (npm run local, or --url)`,
    );
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (res.ok) {
    if (json === undefined)
      throw new ApiError(
        res.status,
        "not_json",
        `${method} ${url.pathname} answered ${res.status} without a JSON body`,
      );
    return json;
  }
  const error = (json as { error?: { code?: unknown; message?: unknown; field?: unknown } } | undefined)?.error;
  if (error && typeof error.message === "string") {
    throw new ApiError(
      res.status,
      String(error.code ?? "error"),
      error.message,
      typeof error.field === "string" ? error.field : undefined,
    );
  }
  // A refusal from the host itself (401 without a valid key, 404 for a missing route) has no JSON error body.
  const hint =
    res.status === 401 || res.status === 403
      ? "; sign in: pass an Entra token with --token or POOLSYNC_TOKEN (or, with the key fallback, --key)"
      : res.status === 404
        ? "; is --url a poolsync app?"
        : "";
  throw new ApiError(
    res.status,
    `http_${res.status}`,
    `${method} ${url.pathname} answered ${res.status} ${res.statusText}${hint}`,
  );
}
