import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP hop in front of Azurite's Table endpoint that passes every request through unchanged and counts them: how
 * many in all, and the most in flight at once. What storage sees of the app, measured where it arrives.
 */
export interface TableCounter {
  /** The connection string's `TableEndpoint` to give the app: this hop, with Azurite's account path. */
  endpoint: string;
  requests(): number;
  /** The most requests in flight at once since the last reset. */
  maxInFlight(): number;
  reset(): void;
  stop(): Promise<void>;
}

export async function startTableCounter(tableEndpoint: string): Promise<TableCounter> {
  const target = new URL(tableEndpoint);
  const agent = new Agent({ keepAlive: true });
  let total = 0;
  let inFlight = 0;
  let max = 0;
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
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
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
  return {
    endpoint: `http://127.0.0.1:${port}${target.pathname}`,
    requests: () => total,
    maxInFlight: () => max,
    reset: () => {
      max = inFlight;
    },
    stop: async () => {
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
