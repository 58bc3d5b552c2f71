import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { callApi, UnreachableError } from "../../src/cli/client";

/**
 * The CLI's credentials stay on the origin they were given for: https only (loopback excepted), no cross-origin
 * redirect.
 */
describe("the CLI's transport", () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  async function serve(handler: http.RequestListener, host: string): Promise<string> {
    const s = http.createServer(handler);
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, host, r));
    return `http://${host === "::1" ? "[::1]" : host}:${(s.address() as { port: number }).port}`;
  }

  it("does not carry the key across a redirect to another origin", async () => {
    const got: Array<string | undefined> = [];
    const other = await serve((req, res) => {
      got.push(req.headers["x-functions-key"] as string | undefined);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    }, "127.0.0.1");
    const first = await serve(
      (_req, res) => res.writeHead(307, { location: `${other.replace("127.0.0.1", "localhost")}/api/status` }).end(),
      "127.0.0.1",
    );
    await expect(callApi({ url: first, key: "secret-key" }, "GET", "api/status")).rejects.toThrow(/redirected to/);
    expect(got).toEqual([]);
  });

  it("follows a redirect on the same origin, with the key", async () => {
    const got: Array<string | undefined> = [];
    const url = await serve((req, res) => {
      if (req.url === "/api/status") return res.writeHead(302, { location: "/api/status2" }).end();
      got.push(req.headers["x-functions-key"] as string | undefined);
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    }, "127.0.0.1");
    expect(await callApi({ url, key: "secret-key" }, "GET", "api/status")).toEqual({ ok: true });
    expect(got).toEqual(["secret-key"]);
  });

  it("refuses to send a key or token over plain http to anything but loopback", async () => {
    const sent: string[] = [];
    const spy = (async (u: URL | string | Request) => {
      sent.push(String(u));
      return new Response("{}");
    }) as typeof fetch;
    await expect(
      callApi({ url: "http://poolsync.example.com", token: "t", fetch: spy }, "GET", "api/status"),
    ).rejects.toBeInstanceOf(UnreachableError);
    expect(sent).toEqual([]);
  });
});
