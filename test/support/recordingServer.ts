import http from "node:http";

/** One request as a recording server received it. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What the server answers a request: a status, a body (JSON when not a string) and any headers. */
export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RecordingServer {
  /** http://127.0.0.1:<port> */
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on a free loopback port that keeps every request it got and answers each as `answer` says: the
 * far side of a client under test, over real sockets.
 */
export async function recordingServer(answer: (r: Received) => Answer): Promise<RecordingServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      received.push(r);
      const a = answer(r);
      const text = a.body === undefined ? "" : typeof a.body === "string" ? a.body : JSON.stringify(a.body);
      res.writeHead(a.status, {
        ...(typeof a.body === "object" ? { "content-type": "application/json" } : {}),
        ...a.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
