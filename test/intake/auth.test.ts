import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO } from "../support/harness";
import { asPrincipal, json, startIntakeApp, VALID_DECLARATION, type IntakeApp } from "./support";

/**
 * Who may do what, across the real HTTP edge: the local runtime plays App Service authentication (it drops any
 * client-sent x-ms-client-principal and turns its test principal header into the platform's), the app reads the
 * principal and its app roles. POOLSYNC_BINDINGS lets the demo scale set join the demo pool only.
 */

const READER = asPrincipal("0000aaaa-0000-0000-0000-00000000000a", "Rita Reader", ["poolsync.Read"]);
const DECLARER = asPrincipal("0000bbbb-0000-0000-0000-00000000000b", "Dan Declarer", [
  "poolsync.Declare",
  "poolsync.Read",
]);
const DECLARE_ONLY = asPrincipal("0000cccc-0000-0000-0000-00000000000c", "Dora DeclareOnly", ["poolsync.Declare"]);
const LB = DEMO.poolId.replace(/\/backendAddressPools\/[^/]+$/, "");
const OTHER_POOL = `${LB}/backendAddressPools/public-ingress`;
const BINDING = `/subscriptions/*/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0 => ${DEMO.poolId}`;

let app: IntakeApp;
let url: string;

beforeAll(async () => {
  // The simulator answers the plans' reads; the queue trigger stays off, so nothing declared is applied.
  app = await startIntakeApp({
    reconcile: true,
    env: {
      POOLSYNC_AUTH: "entra",
      POOLSYNC_BINDINGS: BINDING,
      POOLSYNC_DECLARE_WINDOW_SECONDS: "0",
      "AzureWebJobs.applyBackendPools.Disabled": "true",
    },
  });
  url = app.url;
});
afterAll(async () => {
  await app?.stop();
});

const put = (body: unknown, headers: Record<string, string> = {}) => {
  const init = json(body);
  return fetch(`${url}/api/memberships`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), ...headers },
  });
};
const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; message: string; field?: string } }).error;

describe("without a signed-in caller", () => {
  it("refuses declare, show and status with 401, and stores nothing", async () => {
    const declare = await put(VALID_DECLARATION);
    expect(declare.status).toBe(401);
    expect((await errorOf(declare)).code).toBe("unauthenticated");
    expect((await fetch(`${url}/api/memberships?scaleSetId=${encodeURIComponent(DEMO.scaleSetId)}`)).status).toBe(401);
    expect((await fetch(`${url}/api/status`)).status).toBe(401);
    expect(await app.membershipRows()).toEqual([]);
  });

  it("does not trust an x-ms-client-principal the client sent itself (the platform drops it)", async () => {
    const forged = Buffer.from(
      JSON.stringify({
        claims: [
          { typ: "oid", val: "evil" },
          { typ: "roles", val: "poolsync.Declare" },
        ],
      }),
    ).toString("base64");
    const res = await put(VALID_DECLARATION, { "x-ms-client-principal": forged });
    expect(res.status).toBe(401);
    expect(await app.membershipRows()).toEqual([]);
  });
});

describe("app roles", () => {
  it("poolsync.Read may look but not declare: 403 naming the missing role", async () => {
    const res = await put(VALID_DECLARATION, READER);
    expect(res.status).toBe(403);
    expect(await errorOf(res)).toEqual({
      code: "missing_role",
      message: "Rita Reader (0000aaaa-0000-0000-0000-00000000000a) lacks the app role poolsync.Declare",
    });
    expect((await fetch(`${url}/api/status`, { headers: READER })).status).toBe(200);
    expect(
      (await fetch(`${url}/api/memberships?scaleSetId=${encodeURIComponent(DEMO.scaleSetId)}`, { headers: READER }))
        .status,
    ).toBe(200);
    expect(await app.membershipRows()).toEqual([]);
  });

  it("poolsync.Declare declares, and the caller is recorded and shown by the API and the page", async () => {
    const res = await put(VALID_DECLARATION, DECLARER);
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as { declaredBy: unknown };
    const who = { id: "0000bbbb-0000-0000-0000-00000000000b", name: "Dan Declarer", via: "entra" };
    expect(accepted.declaredBy).toEqual(who);
    const rows = await app.membershipRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ declaredById: who.id, declaredByName: who.name, declaredVia: "entra" });

    const view = (await (
      await fetch(`${url}/api/memberships?scaleSetId=${encodeURIComponent(DEMO.scaleSetId)}`, { headers: READER })
    ).json()) as {
      memberships: Array<{ declaredBy: unknown }>;
    };
    expect(view.memberships.map((m) => m.declaredBy)).toEqual([who]);
    const page = await (await fetch(`${url}/api/status?format=html`, { headers: READER })).text();
    expect(page).toContain('by <span title="0000bbbb-0000-0000-0000-00000000000b">Dan Declarer</span>');
  });

  it("a plan needs poolsync.Read, on GET /api/plan and as a dry run's answer alike: a Declare-only caller gets none", async () => {
    const target = encodeURIComponent(DEMO.scaleSetId);
    const plan = await fetch(`${url}/api/plan?targetId=${target}`, { headers: DECLARE_ONLY });
    expect(plan.status).toBe(403);
    expect(await errorOf(plan)).toEqual({
      code: "missing_role",
      message: "Dora DeclareOnly (0000cccc-0000-0000-0000-00000000000c) lacks the app role poolsync.Read",
    });
    const init = json(VALID_DECLARATION);
    const dry = (who: Record<string, string>) =>
      fetch(`${url}/api/memberships?dryRun=true`, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), ...who },
      });
    const declareOnly = await dry(DECLARE_ONLY);
    expect(declareOnly.status).toBe(403);
    expect(await errorOf(declareOnly)).toEqual({
      code: "missing_role",
      message:
        "Dora DeclareOnly (0000cccc-0000-0000-0000-00000000000c) lacks the app role poolsync.Read (a dry run answers the target's plan, which poolsync.Read guards)",
    });
    // Read alone is no dry run either (it stands for a declaration); both roles get the plan.
    expect((await errorOf(await dry(READER))).message).toMatch(/lacks the app role poolsync\.Declare$/);
    const both = await dry(DECLARER);
    expect(both.status).toBe(200);
    expect(((await both.json()) as { plan: { targetId: string } }).plan.targetId).toBe(DEMO.scaleSetId);
    expect(app.sim!.control.stats().puts).toBe(0);
  });

  it("a malformed test principal is refused by the platform stand-in, before the app", async () => {
    const res = await put(VALID_DECLARATION, { "x-test-client-principal": "{not json" });
    expect(res.status).toBe(401);
  });
});

describe("POOLSYNC_BINDINGS at intake", () => {
  it("refuses a pairing no rule allows, present and absent alike, naming the rule", async () => {
    for (const state of ["present", "absent"]) {
      const res = await put({ ...VALID_DECLARATION, backendPoolId: OTHER_POOL, state }, DECLARER);
      expect(res.status, state).toBe(403);
      const error = await errorOf(res);
      expect(error.code).toBe("binding_refused");
      expect(error.field).toBe("backendPoolId");
      expect(error.message).toContain(
        `backendPoolId: ${OTHER_POOL} is not a pool POOLSYNC_BINDINGS lets ${DEMO.scaleSetId} join: rule 1 (${BINDING}) allows other pools only`,
      );
    }
    expect((await app.membershipRows()).filter((r) => r.backendPoolId === OTHER_POOL)).toEqual([]);
  });
});
