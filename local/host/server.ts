import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EVENT_GRID_WEBHOOK_PATH, handleEventGridWebhook, type EventGridTarget } from "./eventGridWebhook";
import { applyAppServiceAuthentication } from "./clientPrincipal";
import { splitPath } from "./httpRoute";
import { fromRpcHttpResponse, toRpcHttpRequest, type HttpTarget } from "./httpTrigger";
import type { InFlight } from "./inflight";

export interface RuntimeServerOptions {
  host: string;
  port: number;
  http: HttpTarget[];
  eventGrid: ReadonlyMap<string, EventGridTarget>;
  inFlight: InFlight;
  onError: (functionName: string, err: unknown) => void;
}

export interface RuntimeServer {
  port: number;
  /** Refuses new connections, lets in-flight requests finish, then closes idle keep-alive sockets. */
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, status: number, headers: [string, string][] | Record<string, string>, body?: Buffer | string, closing = false): void {
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
    const reply = (status: number, headers: [string, string][] | Record<string, string>, body?: Buffer | string) => send(res, status, headers, body, closing);
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? `${opts.host}:${port}`}`);
    const method = (req.method ?? "GET").toUpperCase();
    const body = await readBody(req);

    if (url.pathname.replace(/\/+$/, "").toLowerCase() === EVENT_GRID_WEBHOOK_PATH) {
      const header = req.headers["aeg-event-type"];
      const result = await opts.inFlight.run(() =>
        handleEventGridWebhook(url.searchParams.get("functionName"), Array.isArray(header) ? header[0] : header, body.toString("utf8"), opts.eventGrid),
      );
      reply(result.status, result.headers ?? {}, result.body);
      return;
    }

    if (url.pathname === "/" && method === "GET") {
      reply(200, { "content-type": "text/plain; charset=utf-8" }, "Your Functions 4.0 app is up and running (poolsync local runtime)\n");
      return;
    }

    const segments = splitPath(url.pathname);
    for (const target of opts.http) {
      // Methods are part of the route, as in the host's router: a known path with another method is no route (404).
      if (!target.methods.includes(method)) continue;
      const params = target.route.match(segments);
      if (!params) continue;
      const auth = applyAppServiceAuthentication(req.headers);
      if ("refused" in auth) {
        reply(401, { "content-type": "text/plain; charset=utf-8" }, `${auth.refused}\n`);
        return;
      }
      const input = {
        inputData: [{ name: target.bindingName, data: { http: toRpcHttpRequest(method, url, auth.headers, body, params) } }],
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
