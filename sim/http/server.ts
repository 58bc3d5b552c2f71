// The HTTP(S) server: reads a request, sends /_sim/ to the control routes and everything else through the ARM
// pipeline, and writes (or drops) the answer. Node's http only.
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { SimControl } from "../control";
import type { SimCore } from "../core";
import { handleControl } from "./controlRoutes";
import { handleArmRequest } from "./pipeline";
import { DROP, type Answer } from "./reply";

// Built into dist/sim/http, the PEM files stay in the source tree (tsc copies no .pem): look there too.
export const TLS_DIR =
  [path.join(__dirname, "..", "tls"), path.join(__dirname, "..", "..", "..", "sim", "tls")].find((d) =>
    existsSync(d),
  ) ?? path.join(__dirname, "..", "tls");

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function listen(core: SimCore, control: SimControl): Promise<RunningServer> {
  const { settings } = core;
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    void serve(core, control, req, res, settings.tls ? "https" : "http").catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "SimulatorError", message: String(e) } }));
    });
  };
  const server = settings.tls
    ? https.createServer(
        { key: readFileSync(path.join(TLS_DIR, "key.pem")), cert: readFileSync(path.join(TLS_DIR, "cert.pem")) },
        onRequest,
      )
    : http.createServer(onRequest);
  // Node closes idle keep-alive sockets after 5 s; a client that reuses one just then gets ECONNRESET, which ARM's
  // front ends (minutes of keep-alive) do not cause. Keep them longer than any client's idle pool timeout.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  return {
    url: `${settings.tls ? "https" : "http"}://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function serve(
  core: SimCore,
  control: SimControl,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  scheme: string,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const bodyText = Buffer.concat(chunks).toString("utf8");
  const base = `${scheme}://${req.headers.host ?? "127.0.0.1"}`;
  const url = new URL(req.url ?? "/", base);
  const method = (req.method ?? "GET").toUpperCase();
  let answer: Answer;
  if (url.pathname.toLowerCase().startsWith("/_sim/")) {
    core.clock.runDue();
    answer = handleControl(control, method, url, bodyText);
  } else {
    answer = await handleArmRequest(core, {
      method,
      url,
      base,
      headers: req.headers,
      bodyText,
      clientIp: req.socket.remoteAddress ?? "127.0.0.1",
    });
  }
  if (answer === DROP) {
    req.socket.destroy();
    return;
  }
  const text = answer.body === undefined ? "" : JSON.stringify(answer.body);
  const headers: Record<string, string> = { ...answer.headers, "content-length": String(Buffer.byteLength(text)) };
  if (answer.body !== undefined) headers["content-type"] = "application/json; charset=utf-8";
  res.writeHead(answer.status, headers);
  res.end(text);
}
