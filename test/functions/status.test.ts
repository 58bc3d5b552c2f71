import { HttpRequest } from "@azure/functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { status } from "../../src/functions/status";
import { signedIn, startFunctionWorld, type FunctionWorld } from "./support";

let world: FunctionWorld;
beforeAll(async () => {
  world = await startFunctionWorld();
});
afterAll(async () => {
  await world.stop();
});

const URL_BASE = "http://127.0.0.1:7071/api/status";
const header = (r: { headers?: unknown }, name: string) => new Headers(r.headers as Record<string, string>).get(name);

describe("status (HTTP), called as the host calls it", () => {
  it("answers JSON counts by default and the page to a browser", async () => {
    const res = await status(new HttpRequest({ method: "GET", url: URL_BASE, headers: signedIn(["poolsync.Read"]) }));
    expect(res.status).toBe(200);
    expect(header(res, "content-type")).toMatch(/application\/json/);
    const body = (res.jsonBody ?? JSON.parse(String(res.body))) as { declarations: { total: number } };
    expect(body.declarations.total).toBe(0);

    const page = await status(
      new HttpRequest({
        method: "GET",
        url: URL_BASE,
        headers: { accept: "text/html,application/xhtml+xml;q=0.9", ...signedIn(["poolsync.Read"]) },
      }),
    );
    expect(page.status).toBe(200);
    expect(header(page, "content-type")).toMatch(/text\/html/);
    expect(String(page.body)).toContain("<html");
  });

  it("answers a write method 405 with Allow: GET", async () => {
    const res = await status(
      new HttpRequest({ method: "DELETE", url: URL_BASE, headers: signedIn(["poolsync.Read"]) }),
    );
    expect(res.status).toBe(405);
    expect(header(res, "allow")).toBe("GET");
  });
});
