import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO } from "../support/harness";
import { DEMO_PROVIDERS, json, OTHER_SUB, startIntakeApp, VALID_DECLARATION, type IntakeApp } from "../intake/support";

/**
 * The same bad input as on the queue, and wrong methods and content types, across the HTTP intake (the built
 * functions, the local runtime's HTTP edge, Azurite): each is a 4xx with a JSON error naming the field, and nothing
 * is stored or queued. test/intake/declare.test.ts has the ordinary refusals; these are the hostile ones.
 */

const SUB = DEMO.subscription;
const RG = DEMO_PROVIDERS;
const valid = VALID_DECLARATION;
const typed = (type: string, body: RequestInit["body"]): RequestInit => ({
  method: "PUT",
  headers: { "content-type": type },
  body,
});

let app: IntakeApp;
let url: string;

beforeAll(async () => {
  app = await startIntakeApp();
  url = `${app.url}/api/memberships`;
});
afterAll(async () => {
  await app?.stop();
});

interface Case {
  name: string;
  init: RequestInit;
  status: number;
  code: string;
  field?: string;
  message: string | RegExp;
  path?: string;
}

const cases: Case[] = [
  {
    name: "not JSON",
    init: json("{not json"),
    status: 400,
    code: "invalid_json",
    message: /^body is not valid JSON: /,
  },
  {
    name: "base64 garbage",
    init: json(Buffer.from(JSON.stringify(valid)).toString("base64")),
    status: 400,
    code: "invalid_json",
    message: /^body is not valid JSON: /,
  },
  {
    name: "bytes that are not UTF-8",
    init: typed("application/json", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])),
    status: 400,
    code: "invalid_json",
    message: "body is not valid UTF-8",
  },
  {
    name: "JSON null",
    init: json("null"),
    status: 400,
    code: "not_an_object",
    message: "body must be a JSON object, not null",
  },
  {
    name: "a JSON string",
    init: json('"declare"'),
    status: 400,
    code: "not_an_object",
    message: "body must be a JSON object, not a string",
  },
  {
    name: "a queue message's version field",
    init: json({ v: 1, ...valid }),
    status: 400,
    code: "unknown_field",
    field: "v",
    message: "v: unknown field",
  },
  {
    name: "a queue message's version and kind",
    init: json({ v: 2, kind: "declare", ...valid }),
    status: 400,
    code: "unknown_field",
    field: "v",
    message: "v, kind: unknown fields",
  },
  {
    name: "an extra field",
    init: json({ ...valid, requestId: "mine" }),
    status: 400,
    code: "unknown_field",
    field: "requestId",
    message: "requestId: unknown field",
  },
  {
    name: "a number as the scale set",
    init: json({ ...valid, scaleSetId: 42 }),
    status: 400,
    code: "invalid_field",
    field: "scaleSetId",
    message: "scaleSetId: must be a string",
  },
  {
    name: "null as the pool",
    init: json({ ...valid, backendPoolId: null }),
    status: 400,
    code: "invalid_field",
    field: "backendPoolId",
    message: "backendPoolId: must be a string",
  },
  {
    name: "a number as the ip configuration",
    init: json({ ...valid, ipConfiguration: 0 }),
    status: 400,
    code: "invalid_field",
    field: "ipConfiguration",
    message: "ipConfiguration: must be a string, or null for the primary ip configuration",
  },
  {
    name: "a network security group as the scale set",
    init: json({ ...valid, scaleSetId: `${RG}/Microsoft.Network/networkSecurityGroups/nsg` }),
    status: 400,
    code: "invalid_field",
    field: "scaleSetId",
    message:
      'scaleSetId: names provider type "Microsoft.Network/networkSecurityGroups", not Microsoft.Compute/virtualMachineScaleSets',
  },
  {
    name: "an application gateway's listener (not a pool)",
    init: json({ ...valid, backendPoolId: `${RG}/Microsoft.Network/applicationGateways/gw/httpListeners/p` }),
    status: 400,
    code: "invalid_field",
    field: "backendPoolId",
    message:
      'backendPoolId: names "Microsoft.Network/applicationGateways/…/httpListeners", not Microsoft.Network/loadBalancers/…/backendAddressPools, …/inboundNatPools or Microsoft.Network/applicationGateways/…/backendAddressPools',
  },
  {
    name: "Drain, which the Network api-version poolsync speaks does not have (issue 43)",
    init: json({ ...valid, adminState: "Drain" }),
    status: 400,
    code: "invalid_field",
    field: "adminState",
    message:
      'adminState: "Drain" is not an admin state of Network api-version 2026-01-01, which poolsync speaks: it has None, Up, Down (Drain was in 2022-01-01 … 2022-09-01 only)',
  },
  {
    name: "an admin state on an application gateway pool, which has none (issue 43)",
    init: json({
      ...valid,
      backendPoolId: `${RG}/Microsoft.Network/applicationGateways/gw/backendAddressPools/p`,
      adminState: "Down",
    }),
    status: 400,
    code: "invalid_field",
    field: "adminState",
    message:
      "adminState: Azure has no admin state for the members of an application gateway backend pool: only an IP-based load balancer backend pool's addresses have one",
  },
  {
    name: "an inbound NAT pool for a VM, whose NIC cannot join one (issue 43)",
    init: json({
      ...valid,
      scaleSetId: undefined,
      targetId: `${RG}/Microsoft.Compute/virtualMachines/vm-1`,
      backendPoolId: `${RG}/Microsoft.Network/loadBalancers/etag-k8s/inboundNatPools/ssh`,
    }),
    status: 400,
    code: "invalid_field",
    field: "backendPoolId",
    message:
      "backendPoolId: an inbound NAT pool is joined only by a scale set's ip configurations (a VM's NIC takes inbound NAT rules instead): declare the scale set",
  },
  {
    name: "instances without an admin state (issue 43)",
    init: json({ ...valid, instances: ["3", "7"] }),
    status: 400,
    code: "invalid_field",
    field: "instances",
    message: "instances: names the members adminState applies to: give adminState too",
  },
  {
    name: "a .. segment in the pool",
    init: json({
      ...valid,
      backendPoolId: `${DEMO.poolId}/../../../../../../resourceGroups/other/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/p`,
    }),
    status: 400,
    code: "invalid_field",
    field: "backendPoolId",
    message: 'backendPoolId: must not contain "." or ".." segments',
  },
  {
    name: "an encoded separator",
    init: json({ ...valid, scaleSetId: `${RG}/Microsoft.Compute/virtualMachineScaleSets/a%2F..%2Fb` }),
    status: 400,
    code: "invalid_field",
    field: "scaleSetId",
    message: "scaleSetId: must not contain encoded characters or backslashes",
  },
  {
    name: "a trailing slash",
    init: json({ ...valid, scaleSetId: `${DEMO.scaleSetId}/` }),
    status: 400,
    code: "invalid_field",
    field: "scaleSetId",
    message: "scaleSetId: has an empty path segment",
  },
  {
    name: "a query string in the ID",
    init: json({ ...valid, scaleSetId: `${DEMO.scaleSetId}?api-version=1` }),
    status: 400,
    code: "invalid_field",
    field: "scaleSetId",
    message: "scaleSetId: must not contain a query string or fragment",
  },
  {
    name: "a pool on a load balancer outside POOLSYNC_SCOPES",
    init: json({ ...valid, backendPoolId: DEMO.poolId.replace(SUB, OTHER_SUB) }),
    status: 403,
    code: "out_of_scope",
    field: "backendPoolId",
    message: `backendPoolId: ${DEMO.poolId.replace(SUB, OTHER_SUB)} is outside POOLSYNC_SCOPES`,
  },
  {
    name: "a 64 KiB body",
    init: json(JSON.stringify({ ...valid, padding: "x".repeat(64 * 1024 - 300) })),
    status: 413,
    code: "body_too_large",
    message: /^body is 65\d{3} bytes, over the 8192-byte limit$/,
  },
  {
    name: "text/plain",
    init: typed("text/plain", JSON.stringify(valid)),
    status: 415,
    code: "unsupported_media_type",
    message: "content-type must be application/json, not text/plain",
  },
  {
    name: "a form",
    init: typed("application/x-www-form-urlencoded", "scaleSetId=x&state=present"),
    status: 415,
    code: "unsupported_media_type",
    message: "content-type must be application/json, not application/x-www-form-urlencoded",
  },
  {
    name: "multipart",
    init: typed("multipart/form-data; boundary=b", "--b--"),
    status: 415,
    code: "unsupported_media_type",
    message: "content-type must be application/json, not multipart/form-data",
  },
  {
    name: "merge-patch JSON",
    init: typed("application/merge-patch+json", JSON.stringify(valid)),
    status: 415,
    code: "unsupported_media_type",
    message: "content-type must be application/json, not application/merge-patch+json",
  },
  {
    name: "a latin-1 charset",
    init: typed("application/json; charset=latin1", JSON.stringify(valid)),
    status: 415,
    code: "unsupported_media_type",
    message: "content-type charset must be utf-8, not latin1",
  },
  {
    name: "PATCH",
    init: { ...json(valid), method: "PATCH" },
    status: 405,
    code: "method_not_allowed",
    message: "method PATCH is not allowed here; use GET or PUT",
  },
  {
    name: "GET with encoded separators in the query",
    init: { method: "GET" },
    path: `?scaleSetId=${encodeURIComponent(`${RG}/Microsoft.Compute/virtualMachineScaleSets/a%2Fb`)}`,
    status: 400,
    code: "invalid_field",
    field: "scaleSetId",
    message: "scaleSetId: must not contain encoded characters or backslashes",
  },
];

describe("hostile input to PUT/GET /api/memberships → 4xx, a JSON error naming the field, nothing stored or queued", () => {
  it.each(cases)("$name → $status $code", async ({ init, status, code, field, message, path }) => {
    const rowsBefore = (await app.membershipRows()).length;
    const queuedBefore = (await app.peekQueue()).length;
    const res = await fetch(`${url}${path ?? ""}`, init);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: { code: string; message: string; field?: string } };
    expect(body.error.code).toBe(code);
    if (typeof message === "string") expect(body.error.message).toBe(message);
    else expect(body.error.message).toMatch(message);
    expect(body.error.field).toBe(field);
    expect((await app.membershipRows()).length).toBe(rowsBefore);
    expect((await app.peekQueue()).length).toBe(queuedBefore);
  });
});

describe("wrong methods on /api/status", () => {
  it.each(["PUT", "POST", "DELETE"])("%s → 405 with Allow: GET and a JSON error", async (method) => {
    const res = await fetch(`${app.url}/api/status`, {
      method,
      headers: { "content-type": "application/json" },
      body: method === "DELETE" ? undefined : "{}",
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    expect(await res.json()).toEqual({
      error: { code: "method_not_allowed", message: `method ${method} is not allowed here; use GET` },
    });
  });
});

describe("a function key in the page's URL", () => {
  it("is never copied into the page (the JSON link drops ?code=, in any casing)", async () => {
    const secret = "k3y-s3cr3t-value";
    const res = await fetch(`${app.url}/api/status?code=${secret}&CODE=${secret}&poison=1`, {
      headers: { accept: "text/html" },
    });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).not.toContain(secret);
    expect(page).toContain('<a href="/api/status?poison=1&amp;format=json">JSON</a>');
  });
});

describe("a repeated query parameter is refused, naming it (the host joins repeated values with commas)", () => {
  const refusal = (name: string, times = 2) => ({
    error: {
      code: "repeated_parameter",
      message: `${name}: given ${times} times; give it once (a repeated parameter is refused, not guessed at)`,
      field: name,
    },
  });

  it.each([
    ["?dryRun=false&dryRun=true", "dryRun"],
    ["?dryRun=true&dryRun=false", "dryRun"],
    ["?dryRun=false&DryRun=true", "dryRun"],
    ["?dryRun=false,true", "dryRun"],
    ["?targetId=x&scaleSetId=y&targetId=z", "targetId"],
  ])("PUT /api/memberships%s → 400 naming %s; nothing stored or queued", async (query, name) => {
    const rowsBefore = (await app.membershipRows()).length;
    const queuedBefore = (await app.peekQueue()).length;
    const res = await fetch(`${url}${query}`, json(valid));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(refusal(name));
    expect((await app.membershipRows()).length).toBe(rowsBefore);
    expect((await app.peekQueue()).length).toBe(queuedBefore);
  });

  it("?DRYRUN=true in another casing is the dry run it says, never a real declaration", async () => {
    const rowsBefore = (await app.membershipRows()).length;
    const res = await fetch(`${url}?DRYRUN=true`, json(valid));
    // No simulator behind this app: the dry run's plan cannot read ARM (503), and nothing is stored.
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("arm_unavailable");
    expect((await app.membershipRows()).length).toBe(rowsBefore);
    expect((await app.peekQueue()).length).toBe(0);
  });

  const ss = encodeURIComponent(DEMO.scaleSetId);
  it.each([
    ["/api/memberships, scaleSetId twice", `/api/memberships?scaleSetId=${ss}&scaleSetId=${ss}`, "scaleSetId"],
    ["/api/status, poison twice", "/api/status?poison=1&poison=0", "poison"],
    ["/api/status, format in two casings", "/api/status?format=json&Format=html", "format"],
    ["/api/plan, targetId twice", `/api/plan?targetId=${ss}&targetId=${ss}`, "targetId"],
    ["/api/history, limit twice", `/api/history?targetId=${ss}&limit=5&limit=500`, "limit"],
    ["/api/history, cursor twice", `/api/history?targetId=${ss}&cursor=a&cursor=b`, "cursor"],
  ])("GET %s → 400 naming it", async (_name, path, name) => {
    const res = await fetch(`${app.url}${path}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(refusal(name));
  });
});
