import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EVENT_GRID_WEBHOOK_PATH, handleEventGridWebhook, type EventGridTarget } from "./eventGridWebhook";
import { applyAppServiceAuthentication } from "./clientPrincipal";
import { splitPath } from "./httpRoute";
import { fromRpcHttpResponse, toRpcHttpRequest, type HttpTarget } from "./httpTrigger";
import type { InFlight } from "./inflight";
import { hostAllowed, keyMatches, MAX_REQUEST_BODY_BYTES } from "./requestGuard";

export interface RuntimeServerOptions {
  host: string;
  port: number;
  http: HttpTarget[];
  eventGrid: ReadonlyMap<string, EventGridTarget>;
  inFlight: InFlight;
  onError: (functionName: string, err: unknown) => void;
  /** Listen beyond loopback (0.0.0.0, a LAN address): refused unless set. */
  allowRemote?: boolean;
  /** Host names served besides loopback's when allowRemote (the machine's name, as callers address it). */
  allowedHosts?: readonly string[];
  /**
   * Honour `x-test-client-principal` (tests and demos only): off, the header is dropped like any client-sent principal.
   */
  testPrincipals?: boolean;
  /** The Event Grid extension's key: the webhook answers 401 without it (`?code=` or `x-functions-key`). */
  webhookKey: string;
  /** A function key: function-level routes answer 401 without it. Unset: not checked (loopback only). */
  functionKey?: string;
  /** Largest request body taken (default: the Functions host's 100 MiB). */
  maxBodyBytes?: number;
}

export interface RuntimeServer {
  port: number;
  /** Refuses new connections, lets in-flight requests finish, then closes idle keep-alive sockets. */
  close(): Promise<void>;
}

class BodyTooLarge extends Error {}

/** The body, or BodyTooLarge past `max` bytes (announced by Content-Length or counted as it arrives). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers["content-length"] ?? 0) > max) return reject(new BodyTooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.removeAllListeners("data");
        req.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function send(
  res: ServerResponse,
  status: number,
  headers: [string, string][] | Record<string, string>,
  body?: Buffer | string,
  closing = false,
): void {
  res.statusCode = status;
  // While shutting down, no keep-alive: the socket must not outlive the last response.
  if (closing) res.setHeader("connection", "close");
  for (const [k, v] of Array.isArray(headers) ? headers : Object.entries(headers)) res.appendHeader(k, v);
  res.end(body);
}

/** The host's HTTP surface: the Event Grid webhook and the HTTP-triggered functions under the route prefix. */
export async function startRuntimeServer(opts: RuntimeServerOptions): Promise<RuntimeServer> {
  let closing = false;
  const server: Server = createServer((req, res) => {
    if (closing) {
      send(res, 503, {}, "The host is shutting down", true);
      return;
    }
    handle(req, res).catch((err) => {
      if (!res.headersSent) send(res, 500, {}, (err as Error)?.message ?? "Internal error");
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, rawRes: ServerResponse): Promise<void> {
    const res = rawRes;
    const reply = (status: number, headers: [string, string][] | Record<string, string>, body?: Buffer | string) =>
      send(res, status, headers, body, closing);
    // DNS rebinding: a page of another site whose name now resolves to 127.0.0.1 still sends its own name.
    if (
      !hostAllowed(req.headers.host, {
        listenHost: opts.host,
        allowRemote: opts.allowRemote ?? false,
        allowedHosts: opts.allowedHosts ?? [],
      })
    ) {
      reply(
        421,
        { "content-type": "text/plain; charset=utf-8" },
        `Host ${JSON.stringify(req.headers.host ?? "")} is not served here\n`,
      );
      req.resume();
      return;
    }
    const url = new URL(req.url ?? "/", `http://${opts.host.includes(":") ? `[${opts.host}]` : opts.host}:${port}`);
    const method = (req.method ?? "GET").toUpperCase();
    let body: Buffer;
    try {
      body = await readBody(req, opts.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES);
    } catch (err) {
      if (!(err instanceof BodyTooLarge)) throw err;
      reply(413, { "content-type": "text/plain; charset=utf-8", connection: "close" }, "Request body too large\n");
      return;
    }
    const presentedKey = (): string | null => {
      const header = req.headers["x-functions-key"];
      return (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get("code");
    };

    if (url.pathname.replace(/\/+$/, "").toLowerCase() === EVENT_GRID_WEBHOOK_PATH) {
      if (!keyMatches(presentedKey(), opts.webhookKey)) {
        reply(401, { "content-type": "text/plain; charset=utf-8" }, "The Event Grid webhook needs its key (?code=)\n");
        return;
      }
      const header = req.headers["aeg-event-type"];
      const result = await opts.inFlight.run(() =>
        handleEventGridWebhook(
          url.searchParams.get("functionName"),
          Array.isArray(header) ? header[0] : header,
          body.toString("utf8"),
          opts.eventGrid,
        ),
      );
      reply(result.status, result.headers ?? {}, result.body);
      return;
    }

    if (url.pathname === "/" && method === "GET") {
      reply(
        200,
        { "content-type": "text/plain; charset=utf-8" },
        "Your Functions 4.0 app is up and running (poolsync local runtime)\n",
      );
      return;
    }

    const segments = splitPath(url.pathname);
    for (const target of opts.http) {
      // Methods are part of the route, as in the host's router: a known path with another method is no route (404).
      if (!target.methods.includes(method)) continue;
      const params = target.route.match(segments);
      if (!params) continue;
      if (
        opts.functionKey !== undefined &&
        target.authLevel !== "anonymous" &&
        !keyMatches(presentedKey(), opts.functionKey)
      ) {
        reply(401, {});
        return;
      }
      const auth = applyAppServiceAuthentication(req.headers, opts.testPrincipals ?? false);
      if ("refused" in auth) {
        reply(401, { "content-type": "text/plain; charset=utf-8" }, `${auth.refused}\n`);
        return;
      }
      const input = {
        inputData: [
          { name: target.bindingName, data: { http: toRpcHttpRequest(method, url, auth.headers, body, params) } },
        ],
        triggerMetadata: {},
      };
      let result;
      try {
        result = fromRpcHttpResponse(await opts.inFlight.run(() => target.invoke(input)));
      } catch (err) {
        opts.onError(target.functionName, err);
        reply(500, {});
        return;
      }
      reply(result.status, result.headers, result.body);
      return;
    }
    reply(404, {});
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing = true;
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
