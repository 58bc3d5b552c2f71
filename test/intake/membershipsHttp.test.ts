import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleMemberships } from "../../src/intake/membershipsHttp";
import { ROLES } from "../../src/intake/principal";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { API, entraCaller, errorOf, putJson, refusals, request } from "./requests";

/**
 * src/intake/membershipsHttp.ts: PUT /api/memberships declares, GET shows; the caller's role is checked first, a dry
 * run needs Read too, and storage's trouble is a 503. The app's real services (Azurite, the simulator's ARM), with
 * Entra callers as App Service authentication presents them.
 */
const body = { targetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" };
const declarer = entraCaller("oid-dev", "Dev", [ROLES.declare]);
const both = entraCaller("oid-ops", "Ops", [ROLES.declare, ROLES.read]);
const reader = entraCaller("oid-viewer", "Viewer", [ROLES.read]);

describe("handleMemberships", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { POOLSYNC_AUTH: "entra", WEBSITE_AUTH_ENABLED: "True" } });
  });
  afterAll(async () => {
    await h.stop();
  });

  it("declares for a caller with Declare, 202 with where to watch it, and shows it to a reader there", async () => {
    const put = await handleMemberships(putJson(`${API}/memberships`, body, declarer), h.services);
    expect(put.status).toBe(202);
    expect(put.jsonBody).toMatchObject({
      status: "accepted",
      declaredBy: { id: "oid-dev", name: "Dev", via: "entra" },
    });
    const location = (put.headers as Record<string, string>).location!;
    expect(location).toBe(`/api/memberships?targetId=${encodeURIComponent(DEMO.scaleSetId)}`);
    const shown = await handleMemberships(request("GET", `http://127.0.0.1${location}`, reader), h.services);
    expect(shown.status).toBe(200);
    expect(shown.jsonBody).toMatchObject({
      targetId: DEMO.scaleSetId,
      targetKind: "scaleSet",
      memberships: [{ backendPoolId: DEMO.poolId, declared: "present", declaredBy: { id: "oid-dev" } }],
    });
  });

  it("refuses a declaration to a reader and a view to a declarer, naming the role each lacks", async () => {
    const put = await handleMemberships(putJson(`${API}/memberships`, body, reader), h.services);
    expect([put.status, errorOf(put).message]).toEqual([
      403,
      "Viewer (oid-viewer) lacks the app role poolsync.Declare",
    ]);
    const get = await handleMemberships(request("GET", `${API}/memberships?targetId=x`, declarer), h.services);
    expect(get.status).toBe(403);
  });

  it("asks a dry run for both roles, since it answers the target's plan, and stores nothing for it", async () => {
    const url = `${API}/memberships?dryRun=true`;
    const absent = { ...body, state: "absent" };
    const refused = await handleMemberships(putJson(url, absent, declarer), h.services);
    expect(refused.status).toBe(403);
    expect(errorOf(refused).message).toContain("a dry run answers the target's plan, which poolsync.Read guards");
    const ok = await handleMemberships(putJson(url, absent, both), h.services);
    expect([ok.status, (ok.jsonBody as { dryRun?: boolean }).dryRun]).toEqual([200, true]);
    const shown = await handleMemberships(
      request("GET", `${API}/memberships?targetId=${encodeURIComponent(DEMO.scaleSetId)}`, reader),
      h.services,
    );
    expect((shown.jsonBody as { memberships: { declared: string }[] }).memberships.map((m) => m.declared)).toEqual([
      "present",
    ]);
  });

  it("refuses a dry run flag it cannot read, a repeated one, a missing target and another method, each saying so", async () => {
    const answers = await refusals(
      [
        putJson(`${API}/memberships?dryRun=maybe`, body, both),
        putJson(`${API}/memberships?dryRun=true&dryRun=false`, body, both),
        request("GET", `${API}/memberships`, reader),
        request("DELETE", `${API}/memberships`, both),
      ].map((r) => handleMemberships(r, h.services)),
    );
    expect(answers).toEqual([
      [400, "invalid_field", "dryRun"],
      [400, "repeated_parameter", "dryRun"],
      [400, "missing_query", "targetId"],
      [405, "method_not_allowed", undefined],
    ]);
  });
});
