import { describe, expect, it } from "vitest";
import type { StoredDeclaration } from "../../src/core/declarations";
import type { CachedEntry, CachedPartition } from "../../src/core/ports";
import type { InstanceModel, ScaleSetModel } from "../../src/core/models";
import { wantsHtml } from "../../src/intake/contentNegotiation";
import { acceptDeclaration } from "../../src/intake/acceptDeclaration";
import { parseDeclareRequest } from "../../src/intake/declareRequest";
import { KEY_CALLER } from "../../src/intake/principal";
import { esc, html } from "../../src/intake/html";
import { readJsonBody } from "../../src/intake/jsonBody";
import { observeScaleSet } from "../../src/intake/observedState";
import { describePoison } from "../../src/intake/poisonMessages";
import { renderStatusPage } from "../../src/intake/statusPage";
import type { StatusReport } from "../../src/intake/statusReport";
import { memoryLogger } from "../../src/app/logger";
import { parseScope } from "../../src/core/scopes";
import { parseBindings } from "../../src/core/bindings";
import { DEMO } from "../support/harness";
import { stored } from "./viewFixtures";

/** The pure parts of the intake, each with the exact answer it gives. */

const scope = parseScope(`/subscriptions/${DEMO.subscription}`);
if (!scope.ok) throw new Error(scope.reason);
const scopes = [scope.value];

describe("wantsHtml", () => {
  it.each([
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", null, true],
    ["application/json", null, false],
    [null, null, false],
    ["*/*", null, false],
    ["application/json, text/html", null, false],
    ["text/html;q=0.5, application/json", null, false],
    ["text/html, application/json;q=0.9", null, true],
    ["text/html;q=0", null, false],
    ["application/json", "html", true],
    ["text/html", "json", false],
  ] as const)("Accept %s, format %s → %s", (accept, format, expected) => {
    expect(wantsHtml(accept, format)).toBe(expected);
  });
});

describe("html escaping", () => {
  it("escapes every interpolated value, in text and attributes, and leaves only trusted markup", () => {
    const evil = `"><script>alert('x')</script>&\``;
    expect(esc(evil)).toBe("&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&#96;");
    expect(html`<a title="${evil}">${evil}</a>`.text).toBe(`<a title="${esc(evil)}">${esc(evil)}</a>`);
    expect(html`<b>${html`<i>${"<x>"}</i>`}</b>`.text).toBe("<b><i>&lt;x&gt;</i></b>");
  });

  it("renders a report whose every user-supplied string is hostile without a single tag from it", () => {
    const evil = `<img src=x onerror=alert(1)>`;
    const report: StatusReport = {
      generatedAt: "2026-01-01T00:00:00.000Z",
      declarations: {
        total: 1,
        byOutcome: { pending: 0, applied: 0, failed: 1, refused: 0, "target-deleted": 0, "target-deleting": 0 },
        byState: { present: 1, absent: 0 },
        truncated: false,
      },
      cache: {
        enabled: true,
        rows: 0,
        scaleSets: 0,
        instances: 0,
        stale: 0,
        expired: 0,
        ttlSeconds: 600,
        truncated: false,
      },
      staleEntries: [{ scaleSetId: evil, reason: evil, since: "2026-01-01T00:00:00.000Z" }],
      queue: { name: evil, depth: 0, poisonName: evil, poison: 1 },
      recent: {
        preconditionFailures: [{ scaleSetId: evil, backendPoolId: evil, at: "2026-01-01T00:00:00.000Z", reason: evil }],
        throttles: [],
      },
      scaleSets: [
        {
          scaleSetId: evil,
          cacheEnabled: true,
          model: { cached: true, stale: true, staleReason: evil, etag: evil, readAt: "2026-01-01T00:00:00.000Z" },
          memberships: [
            {
              backendPoolId: evil,
              poolKind: "loadBalancerBackendPool",
              adminState: evil,
              adminInstances: [evil],
              movedTo: evil,
              ipConfiguration: evil,
              declared: "present",
              declaredAt: "2026-01-01T00:00:00.000Z",
              requestId: evil,
              declaredBy: { id: evil, name: evil, via: "entra" },
              outcome: { kind: evil, reason: evil, at: "2026-01-01T00:00:00.000Z", appliedEtag: evil },
              attempts: 1,
              sync: "drift",
              model: { state: "absent", note: evil, stale: true, staleReason: evil, etag: evil },
              instances: [{ instanceId: evil, state: "absent", stale: false, etag: evil, note: evil }],
            },
          ],
          observedPools: [{ nicConfiguration: evil, ipConfiguration: evil, backendPoolId: evil, declared: false }],
        },
      ],
      scaleSetsTruncated: false,
      poison: [
        { messageId: evil, insertedOn: "2026-01-01T00:00:00.000Z", dequeueCount: 1, reason: evil, received: evil },
      ],
    };
    const page = renderStatusPage(report, { jsonHref: `/api/status?x="${evil}` });
    expect(page).not.toContain("<img");
    expect(page).not.toMatch(/<script/i);
    expect(page.split(esc(evil)).length - 1).toBeGreaterThanOrEqual(15);
  });
});

describe("readJsonBody", () => {
  const req = (body: string, headers: Record<string, string>) => ({
    headers: new Headers(headers),
    arrayBuffer: async () => new TextEncoder().encode(body).buffer as ArrayBuffer,
  });
  it("refuses a charset other than UTF-8, a Content-Length over the limit before reading, and bytes that are not UTF-8", async () => {
    expect(await readJsonBody(req("{}", { "content-type": "application/json; charset=latin1" }))).toEqual({
      ok: false,
      problem: {
        status: 415,
        code: "unsupported_media_type",
        message: "content-type charset must be utf-8, not latin1",
      },
    });
    let read = false;
    const big = {
      headers: new Headers({ "content-type": "application/json", "content-length": "999999" }),
      arrayBuffer: async () => ((read = true), new ArrayBuffer(0)),
    };
    expect(await readJsonBody(big)).toMatchObject({
      ok: false,
      problem: { status: 413, message: "body is 999999 bytes, over the 8192-byte limit" },
    });
    expect(read).toBe(false);
    const latin = {
      headers: new Headers({ "content-type": "application/json" }),
      arrayBuffer: async () => new Uint8Array([0x7b, 0xff, 0x7d]).buffer,
    };
    expect(await readJsonBody(latin)).toMatchObject({
      ok: false,
      problem: { status: 400, code: "invalid_json", message: "body is not valid UTF-8" },
    });
  });
});

describe("acceptDeclaration", () => {
  // Bindings are required since issue 26: "*" pairs anything inside the scopes.
  const anyPairing = parseBindings("*");
  if (!anyPairing.ok) throw new Error("the any-pairing rule no longer parses");
  const parsed = parseDeclareRequest(
    { scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" },
    scopes,
    anyPairing.value,
  );
  if (!parsed.ok) throw new Error(parsed.problem.message);
  const base = { log: memoryLogger(), now: () => Date.parse("2026-01-01T00:00:00Z"), newRequestId: () => "req-1" };

  it("stores first: a store failure is 503 and nothing is queued", async () => {
    let queued = 0;
    const r = await acceptDeclaration(parsed.value, KEY_CALLER, {
      ...base,
      declare: async () => {
        queued++;
        return Promise.reject(new Error("connect ECONNREFUSED"));
      },
    });
    expect(r).toEqual({
      ok: false,
      problem: {
        status: 503,
        code: "storage_unavailable",
        message: "the declaration could not be stored; nothing was accepted, try again",
        headers: { "retry-after": "5" },
      },
    });
    expect(queued).toBe(1);
  });

  it("once stored it is accepted even if the enqueue fails (the timer finds declared scale sets), and says so", async () => {
    const stored = { requestId: "req-1", declaredAt: "2026-01-01T00:00:00.000Z" } as StoredDeclaration;
    const r = await acceptDeclaration(parsed.value, KEY_CALLER, {
      ...base,
      // Stored, and the pass could not be scheduled (the batcher logs the failed enqueue and answers without it).
      declare: async () => ({ result: "created", stored }),
    });
    expect(r).toMatchObject({ ok: true, value: { requestId: "req-1", status: "accepted", queued: false } });
  });

  it("answers 409 when a newer declaration for the same pool and ip configuration is stored", async () => {
    const stored = { requestId: "queue-9", declaredAt: "2027-01-01T00:00:00.000Z" } as StoredDeclaration;
    const r = await acceptDeclaration(parsed.value, KEY_CALLER, {
      ...base,
      declare: async () => ({ result: "older", stored }),
    });
    expect(r).toEqual({
      ok: false,
      problem: {
        status: 409,
        code: "superseded",
        message:
          "a newer declaration for this pool and ip configuration is stored (declared at 2027-01-01T00:00:00.000Z, request queue-9)",
      },
    });
  });
});

describe("observeScaleSet", () => {
  const nics = (pools: string[]) => [
    {
      name: "nic0",
      primary: true,
      ipConfigurations: [
        { name: "ipConfig0", primary: true, loadBalancerBackendAddressPools: pools.map((id) => ({ id })) },
      ],
    },
  ];
  const entry = <M>(model: M, readAt: number, stale = false): CachedEntry<M> => ({
    model,
    readAt,
    stale,
    staleReason: stale ? "event" : undefined,
    ourClientRequestId: undefined,
    pendingClientRequestId: undefined,
    rowEtag: "x",
  });
  const declaration = stored({
    scaleSetId: DEMO.scaleSetId,
    backendPoolId: DEMO.poolId,
    declaredAt: "2026-01-01T00:00:00.000Z",
    requestId: "r",
    declaredBy: { id: "queue", name: "queue", via: "queue" },
    outcome: { kind: "applied", at: "2026-01-01T00:00:00.000Z" },
    attempts: 0,
    rowEtag: "e",
  });
  const now = 1_000_000;
  const model = {
    id: DEMO.scaleSetId,
    etag: '"5"',
    location: "x",
    provisioningState: "Succeeded",
    capacity: 2,
    nics: nics([DEMO.poolId]),
  } as ScaleSetModel;
  const inst = (id: string, pools: string[]) =>
    ({
      id: `${DEMO.scaleSetId}/virtualMachines/${id}`,
      instanceId: id,
      etag: `"${id}"`,
      location: "x",
      provisioningState: "Succeeded",
      nics: nics(pools),
    }) as InstanceModel;

  it("is drift when one instance lacks the pool, naming the stale and past-TTL observations", () => {
    const partition: CachedPartition = {
      scaleSet: entry(model, now - 1000),
      instances: new Map([
        ["0", entry(inst("0", [DEMO.poolId]), now - 700_000)],
        ["1", entry(inst("1", []), now - 1000, true)],
      ]),
    };
    const v = observeScaleSet(DEMO.scaleSetId, [declaration], partition, { now, ttlMs: 600_000, cacheEnabled: true });
    const m = v.memberships[0]!;
    expect(m.sync).toBe("drift");
    expect(m.model).toEqual({
      state: "present",
      etag: '"5"',
      readAt: new Date(now - 1000).toISOString(),
      stale: false,
    });
    expect(m.instances).toEqual([
      {
        instanceId: "0",
        state: "present",
        etag: '"0"',
        readAt: new Date(now - 700_000).toISOString(),
        stale: true,
        staleReason: "read 700 s ago, past the 600 s TTL",
      },
      {
        instanceId: "1",
        state: "absent",
        etag: '"1"',
        readAt: new Date(now - 1000).toISOString(),
        stale: true,
        staleReason: "event",
      },
    ]);
  });

  it("is unknown, saying why, with the cache disabled or nothing read yet", () => {
    const empty: CachedPartition = { scaleSet: undefined, instances: new Map() };
    expect(
      observeScaleSet(DEMO.scaleSetId, [declaration], empty, { now, ttlMs: 1, cacheEnabled: false }).memberships[0],
    ).toMatchObject({
      sync: "unknown",
      model: { state: "unknown", note: "the cache is disabled (POOLSYNC_CACHE_ENABLED=false)" },
    });
    expect(
      observeScaleSet(DEMO.scaleSetId, [declaration], empty, { now, ttlMs: 1, cacheEnabled: true }).memberships[0]
        ?.model,
    ).toEqual({
      state: "unknown",
      note: "not read yet",
      stale: false,
    });
  });
});

describe("describePoison", () => {
  const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
  it("reads poolsync's envelope, a message the host moved, and plain text", () => {
    expect(
      describePoison(
        b64(
          JSON.stringify({
            reason: "v: unknown schema version 2 (this poolsync reads 1)",
            received: '{"v":2,"scaleSetId":"/s"}',
            at: "t",
          }),
        ),
      ),
    ).toEqual({
      reason: "v: unknown schema version 2 (this poolsync reads 1)",
      received: '{"v":2,"scaleSetId":"/s"}',
      scaleSetId: "/s",
    });
    expect(describePoison(b64('{"v":1,"kind":"reconcile","scaleSetId":"/s","reason":"r"}'))).toEqual({
      reason: "failed on every delivery (moved after maxDequeueCount)",
      received: '{"v":1,"kind":"reconcile","scaleSetId":"/s","reason":"r"}',
      scaleSetId: "/s",
    });
    expect(describePoison("not base64 at all!")).toEqual({
      reason: "failed on every delivery (moved after maxDequeueCount)",
      received: "not base64 at all!",
    });
  });
});
