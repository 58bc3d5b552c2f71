import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP hop in front of Azurite's Table endpoint that passes every request through and counts them: how many in
 * all, and the most in flight at once. What storage sees of the app, measured where it arrives. A test may also have
 * it answer a request as a busy or slow storage front end would (`fault`).
 */
export interface TableCounter {
  /** The connection string's `TableEndpoint` to give the app: this hop, with Azurite's account path. */
  endpoint: string;
  requests(): number;
  /** The most requests in flight at once since the last reset. */
  maxInFlight(): number;
  reset(): void;
  /** Decides, per request, whether storage misbehaves for it; undefined passes every request through. */
  fault: ((req: { method: string; path: string }) => TableFault | undefined) | undefined;
  stop(): Promise<void>;
}

/**
 * `busy`: answered 503 ServerBusy at once, never reaching Azurite (the front end refused it, as Azure documents).
 * `slow`: reaches Azurite and takes effect, but its answer is held back `ms` (longer than the client waits).
 */
export type TableFault = { kind: "busy" } | { kind: "slow"; ms: number };

const SERVER_BUSY = JSON.stringify({
  "odata.error": {
    code: "ServerBusy",
    message: { lang: "en-US", value: "The server is busy." },
  },
});

export async function startTableCounter(tableEndpoint: string): Promise<TableCounter> {
  const target = new URL(tableEndpoint);
  const agent = new Agent({ keepAlive: true });
  let total = 0;
  let inFlight = 0;
  let max = 0;
  const held = new Set<NodeJS.Timeout>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    total++;
    inFlight++;
    max = Math.max(max, inFlight);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inFlight--;
    };
    res.on("close", finish);
    const fault = counter.fault?.({ method: req.method ?? "", path: req.url ?? "" });
    if (fault?.kind === "busy") {
      req.resume();
      res.writeHead(503, { "content-type": "application/json", "x-ms-error-code": "ServerBusy" });
      res.end(SERVER_BUSY);
      return;
    }
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        agent,
      },
      (answer) => {
        const pass = () => {
          if (res.destroyed) return answer.resume();
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        };
        if (fault?.kind !== "slow") return pass();
        const timer = setTimeout(() => {
          held.delete(timer);
          pass();
        }, fault.ms);
        held.add(timer);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const counter: TableCounter = {
    endpoint: `http://127.0.0.1:${port}${target.pathname}`,
    requests: () => total,
    maxInFlight: () => max,
    reset: () => {
      max = inFlight;
    },
    fault: undefined,
    stop: async () => {
      for (const t of held) clearTimeout(t);
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return counter;
}
