import { HttpRequest } from "@azure/functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { history } from "../../src/functions/history";
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

const historyOf = (targetId: string, roles: string[], method = "GET") =>
  history(
    new HttpRequest({
      method,
      url: `http://127.0.0.1:7071/api/history?targetId=${encodeURIComponent(targetId)}`,
      headers: signedIn(roles, "Dana Declarer"),
    }),
  );
const body = (r: { jsonBody?: unknown; body?: unknown }) => r.jsonBody ?? JSON.parse(String(r.body));

describe("history (HTTP), called as the host calls it", () => {
  it("answers a target's timeline, newest first, with the declaration and who made it", async () => {
    const declared = await memberships(
      new HttpRequest({
        method: "PUT",
        url: "http://127.0.0.1:7071/api/memberships",
        headers: { "content-type": "application/json", ...signedIn(["poolsync.Declare"], "Dana Declarer") },
        body: { string: JSON.stringify({ scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" }) },
      }),
    );
    expect(declared.status).toBe(202);
    const res = await historyOf(DEMO.scaleSetId, ["poolsync.Read"]);
    expect(res.status).toBe(200);
    expect(body(res)).toMatchObject({
      targetId: DEMO.scaleSetId,
      entries: [{ kind: "declaration", backendPoolId: DEMO.poolId, state: "present", by: { name: "Dana Declarer" } }],
    });
  });

  it("refuses a caller without the read role, and a method other than GET", async () => {
    expect((await historyOf(DEMO.scaleSetId, ["poolsync.Declare"])).status).toBe(403);
    const put = await historyOf(DEMO.scaleSetId, ["poolsync.Read"], "PUT");
    expect(put.status).toBe(405);
    expect(new Headers(put.headers as Record<string, string>).get("allow")).toBe("GET");
  });
});
