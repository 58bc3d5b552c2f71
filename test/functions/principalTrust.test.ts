import { HttpRequest } from "@azure/functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memberships } from "../../src/functions/memberships";
import { DEMO } from "../support/harness";
import { signedIn, startFunctionWorld, type FunctionWorld } from "./support";

/**
 * POOLSYNC_AUTH=entra where nothing is known to strip a client's own x-ms-client-principal (func start, the Functions
 * image on another host: no WEBSITE_SITE_NAME, no WEBSITE_AUTH_ENABLED): a forged header must not make a caller.
 */
let world: FunctionWorld;
beforeAll(async () => {
  // Blank counts as unset (app settings can only be blanked); WEBSITE_* are unset here as under func start.
  world = await startFunctionWorld({ POOLSYNC_PRINCIPAL_STRIPPED_BY: "" });
});
afterAll(async () => {
  await world.stop();
});

describe("the caller header outside App Service authentication", () => {
  it("a forged principal with every role is refused 503, and nothing is declared", async () => {
    const res = await memberships(
      new HttpRequest({
        method: "PUT",
        url: "http://127.0.0.1:7071/api/memberships",
        headers: { "content-type": "application/json", ...signedIn(["poolsync.Declare", "poolsync.Read"], "Mallory") },
        body: { string: JSON.stringify({ scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" }) },
      }),
    );
    expect(res.status).toBe(503);
    expect(String(res.body ?? JSON.stringify(res.jsonBody))).toMatch(/POOLSYNC_PRINCIPAL_STRIPPED_BY/);
    expect(
      await world.queue.getProperties().then(
        (p) => p.approximateMessagesCount,
        () => 0,
      ),
    ).toBe(0); // no queue yet counts as empty
  });
});
