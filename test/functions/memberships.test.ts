import { HttpRequest } from "@azure/functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memberships } from "../../src/functions/memberships";
import { DEMO } from "../support/harness";
import { signedIn, startFunctionWorld, type FunctionWorld } from "./support";

let world: FunctionWorld;
beforeAll(async () => {
  world = await startFunctionWorld();
});
afterAll(async () => {
  await world.stop();
});

const URL_BASE = "http://127.0.0.1:7071/api/memberships";
const put = (body: unknown) =>
  new HttpRequest({
    method: "PUT",
    url: URL_BASE,
    headers: { "content-type": "application/json", ...signedIn(["poolsync.Declare"]) },
    body: { string: JSON.stringify(body) },
  });
const json = (r: { jsonBody?: unknown; body?: unknown }) =>
  (r.jsonBody ?? JSON.parse(String(r.body))) as Record<string, unknown>;

describe("memberships (HTTP), called as the host calls it", () => {
  it("PUT accepts a declaration (202, where to watch it); GET shows it declared for the scale set", async () => {
    const res = await memberships(put({ scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" }));
    expect(res.status).toBe(202);
    expect(json(res)).toMatchObject({ scaleSetId: DEMO.scaleSetId, requestId: expect.any(String) });
    expect(new Headers(res.headers as Record<string, string>).get("location")).toBe(
      `/api/memberships?scaleSetId=${encodeURIComponent(DEMO.scaleSetId)}`,
    );

    const view = await memberships(
      new HttpRequest({
        method: "GET",
        url: `${URL_BASE}?scaleSetId=${encodeURIComponent(DEMO.scaleSetId)}`,
        headers: signedIn(["poolsync.Read"]),
      }),
    );
    expect(view.status).toBe(200);
    expect(JSON.stringify(json(view))).toContain(DEMO.poolId);
    expect(await world.queue.getProperties().then((p) => p.approximateMessagesCount)).toBe(1);
  });

  it("bad input is a 400 naming the field (an unknown one too); another method a 405 with Allow", async () => {
    const unknown = await memberships(
      put({ scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present", requestId: "mine" }),
    );
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(json(unknown))).toContain("requestId");
    const bad = await memberships(put({ scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "maybe" }));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(json(bad))).toContain("state");
    const post = await memberships(
      new HttpRequest({ method: "POST", url: URL_BASE, headers: signedIn(["poolsync.Declare", "poolsync.Read"]) }),
    );
    expect(post.status).toBe(405);
    expect(new Headers(post.headers as Record<string, string>).get("allow")).toContain("PUT");
  });
});
