import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEMO } from "../support/harness";
import { DEMO_PROVIDERS, json, OTHER_SUB, startIntakeApp, VALID_DECLARATION, type IntakeApp } from "./support";

/**
 * PUT /api/memberships across the real HTTP edge: the built function, loaded by the local runtime through
 * @azure/functions' own invocation model, on Azurite. The queue trigger is off here, so the message stays to be seen.
 */

const SUB = DEMO.subscription;
const RG = DEMO_PROVIDERS;
const valid = VALID_DECLARATION;

let app: IntakeApp;
let url: string;

beforeAll(async () => {
  // Window off: each accepted declaration asks for its reconcile at once, visibly (declareWindow.test.ts: on).
  app = await startIntakeApp({ env: { POOLSYNC_DECLARE_WINDOW_SECONDS: "0" } });
  url = `${app.url}/api/memberships`;
});
afterAll(async () => {
  await app?.stop();
});

describe("a valid declaration", () => {
  beforeEach(async () => {
    await app.queue.clearMessages().catch(() => undefined);
  });

  it("answers 202 with the request id, writes the row and enqueues a reconcile for the scale set", async () => {
    const res = await fetch(url, json(valid));
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      targetId: DEMO.scaleSetId,
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: null,
      state: "present",
      declaredBy: { id: "function-key", name: "function key holder", via: "key" },
      status: "accepted",
      queued: true,
    });
    expect(res.headers.get("location")).toBe(`/api/memberships?scaleSetId=${encodeURIComponent(DEMO.scaleSetId)}`);

    const rows = await app.membershipRows();
    const row = rows.find((r) => r.requestId === body.requestId);
    expect(row).toMatchObject({
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      state: "present",
      outcomeKind: "pending",
    });
    expect(Date.now() - Date.parse(String(row?.declaredAt))).toBeLessThan(60_000);

    expect(await app.peekQueue()).toEqual([
      { v: 1, kind: "reconcile", scaleSetId: DEMO.scaleSetId, reason: "declared via API" },
    ]);
  });

  it("keeps one row per pool and ip configuration: a later absent replaces the present, a named ip configuration is its own", async () => {
    const a = (await (await fetch(url, json({ ...valid, ipConfiguration: "ipConfig1" }))).json()) as {
      requestId: string;
      ipConfiguration: string;
    };
    expect(a.ipConfiguration).toBe("ipConfig1");
    const b = (await (await fetch(url, json({ ...valid, ipConfiguration: "ipConfig1", state: "absent" }))).json()) as {
      requestId: string;
    };
    const rows = (await app.membershipRows()).filter((r) => r.ipConfiguration === "ipConfig1");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: "absent", requestId: b.requestId });
    expect(a.requestId).not.toBe(b.requestId);
  });

  it("takes ipConfiguration null as the primary, and a charset parameter on the content type", async () => {
    const res = await fetch(url, {
      method: "PUT",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ ...valid, ipConfiguration: null }),
    });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { ipConfiguration: unknown }).ipConfiguration).toBeNull();
  });
});

describe("refusals: the exact status, code, field and reason, and nothing stored or queued", () => {
  const ss = (tail: string) => ({ ...valid, scaleSetId: `${RG}/${tail}` });
  const cases: Array<{
    name: string;
    init: RequestInit;
    status: number;
    code: string;
    field?: string;
    message: string | RegExp;
  }> = [
    { name: "not JSON", init: json("{nope"), status: 400, code: "invalid_json", message: /^body is not valid JSON: / },
    {
      name: "an empty body",
      init: json(""),
      status: 400,
      code: "invalid_json",
      message: "body is empty; send a JSON object",
    },
    {
      name: "a JSON array",
      init: json([valid]),
      status: 400,
      code: "not_an_object",
      message: "body must be a JSON object, not an array",
    },
    {
      name: "a wrong content type",
      init: { method: "PUT", headers: { "content-type": "text/plain" }, body: JSON.stringify(valid) },
      status: 415,
      code: "unsupported_media_type",
      message: "content-type must be application/json, not text/plain",
    },
    {
      name: "no content type",
      init: { method: "PUT", body: new Blob([JSON.stringify(valid)]) },
      status: 415,
      code: "unsupported_media_type",
      message: "content-type must be application/json, not missing",
    },
    {
      name: "an unknown field",
      init: json({ ...valid, color: "blue" }),
      status: 400,
      code: "unknown_field",
      field: "color",
      message: "color: unknown field",
    },
    {
      name: "a missing state",
      init: json({ scaleSetId: valid.scaleSetId, backendPoolId: valid.backendPoolId }),
      status: 400,
      code: "missing_field",
      field: "state",
      message: "state: is required",
    },
    {
      name: "a state that is neither",
      init: json({ ...valid, state: "on" }),
      status: 400,
      code: "invalid_field",
      field: "state",
      message: 'state: must be "present" or "absent"',
    },
    {
      name: "a subscription that is no GUID",
      init: json({
        ...valid,
        scaleSetId: "/subscriptions/nope/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/x",
      }),
      status: 400,
      code: "invalid_field",
      field: "scaleSetId",
      message: 'scaleSetId: subscription "nope" is not a GUID',
    },
    {
      name: "a .. segment",
      init: json(
        ss("Microsoft.Compute/virtualMachineScaleSets/../../../providers/Microsoft.Compute/virtualMachineScaleSets/x"),
      ),
      status: 400,
      code: "invalid_field",
      field: "scaleSetId",
      message: 'scaleSetId: must not contain "." or ".." segments',
    },
    {
      name: "another provider",
      init: json(ss("Microsoft.Storage/storageAccounts/x")),
      status: 400,
      code: "invalid_field",
      field: "scaleSetId",
      message:
        'scaleSetId: names provider type "Microsoft.Storage/storageAccounts", not Microsoft.Compute/virtualMachineScaleSets',
    },
    {
      name: "a scale set ID as the pool",
      init: json({ ...valid, backendPoolId: DEMO.scaleSetId }),
      status: 400,
      code: "invalid_field",
      field: "backendPoolId",
      message:
        "backendPoolId: is not a pool ID (/subscriptions/{id}/resourceGroups/{rg}/providers/Microsoft.Network/loadBalancers/{lb}/backendAddressPools/{pool}, …/loadBalancers/{lb}/inboundNatPools/{pool} or …/applicationGateways/{agw}/backendAddressPools/{pool})",
    },
    {
      name: "a bad ip configuration name",
      init: json({ ...valid, ipConfiguration: "ip config/<x>" }),
      status: 400,
      code: "invalid_field",
      field: "ipConfiguration",
      message: 'ipConfiguration: must be an ip configuration name, or "nicConfiguration/ipConfiguration"',
    },
    {
      name: "a scale set outside POOLSYNC_SCOPES",
      init: json({ ...valid, scaleSetId: DEMO.scaleSetId.replace(SUB, OTHER_SUB) }),
      status: 403,
      code: "out_of_scope",
      field: "scaleSetId",
      message: `scaleSetId: ${DEMO.scaleSetId.replace(SUB, OTHER_SUB)} is outside POOLSYNC_SCOPES`,
    },
    {
      name: "a pool outside POOLSYNC_SCOPES",
      init: json({ ...valid, backendPoolId: DEMO.poolId.replace(SUB, OTHER_SUB) }),
      status: 403,
      code: "out_of_scope",
      field: "backendPoolId",
      message: `backendPoolId: ${DEMO.poolId.replace(SUB, OTHER_SUB)} is outside POOLSYNC_SCOPES`,
    },
    {
      name: "a huge body",
      init: json(JSON.stringify({ ...valid, padding: "x".repeat(100_000) })),
      status: 413,
      code: "body_too_large",
      message: /^body is 100\d{3} bytes, over the 8192-byte limit$/,
    },
    {
      name: "POST",
      init: { ...json(valid), method: "POST" },
      status: 405,
      code: "method_not_allowed",
      message: "method POST is not allowed here; use GET or PUT",
    },
    {
      name: "DELETE",
      init: { method: "DELETE" },
      status: 405,
      code: "method_not_allowed",
      message: "method DELETE is not allowed here; use GET or PUT",
    },
  ];

  it.each(cases)("$name → $status $code", async ({ init, status, code, field, message }) => {
    const rowsBefore = (await app.membershipRows()).length;
    const queuedBefore = (await app.peekQueue()).length;
    const res = await fetch(url, init);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: { code: string; message: string; field?: string } };
    expect(body.error.code).toBe(code);
    if (typeof message === "string") expect(body.error.message).toBe(message);
    else expect(body.error.message).toMatch(message);
    expect(body.error.field).toBe(field);
    if (status === 405) expect(res.headers.get("allow")).toBe("GET, PUT");
    expect((await app.membershipRows()).length).toBe(rowsBefore);
    expect((await app.peekQueue()).length).toBe(queuedBefore);
  });
});

describe("GET /api/memberships refusals", () => {
  it.each([
    {
      q: "",
      status: 400,
      code: "missing_query",
      field: "targetId",
      message:
        "targetId: is required (?targetId=/subscriptions/…/virtualMachineScaleSets/… or …/virtualMachines/…; or ?scaleSetId=)",
    },
    {
      q: `?scaleSetId=${encodeURIComponent(DEMO.poolId)}`,
      status: 400,
      code: "invalid_field",
      message: /^scaleSetId: is not a scale set ID/,
    },
    {
      q: `?targetId=${encodeURIComponent(`${DEMO.scaleSetId}/virtualMachines/0`)}`,
      status: 400,
      code: "invalid_field",
      field: "targetId",
      message: /^targetId: is a VM of a Uniform scale set/,
    },
    {
      q: `?scaleSetId=${encodeURIComponent(DEMO.scaleSetId.replace(SUB, OTHER_SUB))}`,
      status: 403,
      code: "out_of_scope",
      message: `scaleSetId: ${DEMO.scaleSetId.replace(SUB, OTHER_SUB)} is outside POOLSYNC_SCOPES`,
    },
  ] as { q: string; status: number; code: string; field?: string; message: string | RegExp }[])(
    "$q → $status",
    async ({ q, status, code, field, message }) => {
      const res = await fetch(`${url}${q}`);
      expect(res.status).toBe(status);
      const body = (await res.json()) as { error: { code: string; message: string; field: string } };
      expect(body.error).toMatchObject({ code, field: field ?? "scaleSetId" });
      if (typeof message === "string") expect(body.error.message).toBe(message);
      else expect(body.error.message).toMatch(message);
    },
  );
});

describe("GET /api/status (JSON)", () => {
  it("counts the declarations by outcome, the queue depth and an empty cache and poison queue", async () => {
    await app.queue.clearMessages();
    for (const ip of ["ipConfigA", "ipConfigB"])
      expect((await fetch(url, json({ ...valid, ipConfiguration: ip }))).status).toBe(202);
    const rows = await app.membershipRows();
    const res = await fetch(`${app.url}/api/status`);
    expect(res.status).toBe(200);
    const r = (await res.json()) as {
      declarations: { total: number; byOutcome: Record<string, number>; byState: { present: number; absent: number } };
      cache: { rows: number; stale: number; enabled: boolean };
      queue: { name: string; depth: number; poison: number; poisonName: string };
      scaleSets: Array<{
        scaleSetId: string;
        memberships: Array<{ sync: string; model: { state: string; note: string } }>;
      }>;
      poison?: unknown;
    };
    expect(r.declarations.total).toBe(rows.length);
    expect(r.declarations.byOutcome).toEqual({
      pending: rows.length,
      applied: 0,
      failed: 0,
      refused: 0,
      "target-deleted": 0,
      "target-deleting": 0,
    });
    expect(r.declarations.byState.present + r.declarations.byState.absent).toBe(rows.length);
    expect(r.cache).toMatchObject({ enabled: true, rows: 0, stale: 0 });
    expect(r.queue).toEqual({
      name: app.settings.POOLSYNC_QUEUE,
      depth: 2,
      poisonName: `${app.settings.POOLSYNC_QUEUE}-poison`,
      poison: 0,
    });
    expect(r.scaleSets.map((s) => s.scaleSetId)).toEqual([DEMO.scaleSetId]);
    // Nothing read yet: observed is unknown, and says why.
    expect(
      r.scaleSets[0]?.memberships.every(
        (m) => m.sync === "unknown" && m.model.state === "unknown" && m.model.note === "not read yet",
      ),
    ).toBe(true);
    expect(r.poison).toBeUndefined();
  });
});

// Last: the rows it writes would change the status counts above.
describe("targets beyond Uniform scale sets", () => {
  const vmId = `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
  const v6Pool = DEMO.poolId.replace(/etag-k8s$/, "etag-k8s-v6");
  beforeEach(async () => {
    await app.queue.clearMessages().catch(() => undefined);
  });

  it("takes a VM as targetId with ipVersion: 202, a targetId reconcile, the version stored as the selector; GET by targetId shows it", async () => {
    const res = await fetch(url, json({ targetId: vmId, backendPoolId: v6Pool, ipVersion: "IPv6", state: "present" }));
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      requestId: expect.any(String),
      targetId: vmId,
      backendPoolId: v6Pool,
      ipConfiguration: null,
      ipVersion: "IPv6",
      state: "present",
      declaredBy: expect.any(Object),
      status: "accepted",
      queued: true,
    });
    expect(res.headers.get("location")).toBe(`/api/memberships?targetId=${encodeURIComponent(vmId)}`);
    expect(await app.peekQueue()).toEqual([{ v: 1, kind: "reconcile", targetId: vmId, reason: "declared via API" }]);
    const row = (await app.membershipRows()).find((r) => r.requestId === body.requestId);
    expect(row).toMatchObject({ scaleSetId: vmId, ipConfiguration: "@IPv6", outcomeKind: "pending" });

    const view = (await (await fetch(`${url}?targetId=${encodeURIComponent(vmId)}`)).json()) as {
      targetId: string;
      targetKind: string;
      memberships: { backendPoolId: string }[];
    };
    expect(view).toMatchObject({ targetId: vmId, targetKind: "vm", memberships: [{ backendPoolId: v6Pool }] });
    const status = (await (await fetch(`${app.url}/api/status?targetId=${encodeURIComponent(vmId)}`)).json()) as {
      scaleSets: { scaleSetId: string; memberships: unknown[] }[];
    };
    expect(status.scaleSets).toEqual([
      expect.objectContaining({ scaleSetId: vmId, memberships: [expect.objectContaining({ backendPoolId: v6Pool })] }),
    ]);
  });

  it.each([
    [
      { targetId: `${DEMO.scaleSetId}/virtualMachines/0` },
      "targetId",
      /^targetId: is a VM of a Uniform scale set: its pools follow its scale set/,
    ],
    [
      { targetId: DEMO.scaleSetId, scaleSetId: DEMO.scaleSetId },
      "targetId",
      /^targetId: give targetId or scaleSetId, not both$/,
    ],
    [{}, "targetId", /^targetId: is required \(or scaleSetId\)$/],
    [
      { scaleSetId: DEMO.scaleSetId, ipVersion: "IPv6", ipConfiguration: "ipConfig0" },
      "ipVersion",
      /^ipVersion: give ipVersion or ipConfiguration, not both$/,
    ],
    [{ scaleSetId: DEMO.scaleSetId, ipVersion: "v6" }, "ipVersion", /^ipVersion: must be "IPv4" or "IPv6"$/],
  ])("refuses %j with the field and the reason, storing nothing", async (target, field, message) => {
    const before = (await app.membershipRows()).length;
    const res = await fetch(url, json({ backendPoolId: DEMO.poolId, state: "present", ...target }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { field: string; message: string } };
    expect(body.error.field).toBe(field);
    expect(body.error.message).toMatch(message);
    expect((await app.membershipRows()).length).toBe(before);
  });
});
