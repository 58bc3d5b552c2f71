import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO } from "../support/harness";
import { startIntakeApp, waitFor, type IntakeApp } from "../intake/support";

/**
 * Adversarial queue messages through the local runtime's own queue trigger (host.json's base64 decoding, the
 * built applyBackendPools function, the simulator behind it): each goes to `<queue>-poison` with the exact reason,
 * nothing is written anywhere (zero ARM calls, no membership row), and the app keeps working afterwards.
 */

const SUB = DEMO.subscription;
const OTHER_SUB = "99999999-2222-3333-4444-555555555555";
const RG = `/subscriptions/${SUB}/resourceGroups/etag/providers`;
const ok = { v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" };
const PUBLIC_POOL = DEMO.poolId.replace(/backendAddressPools\/[^/]+$/, "backendAddressPools/public");
const BINDING = `${DEMO.scaleSetId.replace(/virtualMachineScaleSets\/[^/]+$/, "virtualMachineScaleSets/*")} => ${DEMO.poolId}`;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

// [name, what is put on the queue (already encoded as a producer would), the poison entry's exact reason]
const cases: Array<[string, string, string]> = [
  ["not JSON", b64("{not json"), "message is not JSON"],
  ["a JSON number", b64("42"), "message is not a JSON object"],
  ["a JSON array", b64(JSON.stringify([ok])), "message is not a JSON object"],
  ["no version", b64(JSON.stringify({ ...ok, v: undefined })), "v: is required (this poolsync reads 1)"],
  ["an unknown version", b64(JSON.stringify({ ...ok, v: 2 })), "v: unknown schema version 2 (this poolsync reads 1)"],
  [
    "the version as a string",
    b64(JSON.stringify({ ...ok, v: "1" })),
    'v: unknown schema version "1" (this poolsync reads 1)',
  ],
  [
    "an unknown kind",
    b64(JSON.stringify({ ...ok, kind: "undeclare" })),
    'kind: unknown message kind "undeclare" (declare or reconcile)',
  ],
  ["no kind", b64(JSON.stringify({ ...ok, kind: undefined })), "kind: is required (declare or reconcile)"],
  ["an extra field", b64(JSON.stringify({ ...ok, colour: "blue" })), "colour: unknown field"],
  ["two extra fields", b64(JSON.stringify({ ...ok, colour: "blue", size: 3 })), "colour, size: unknown fields"],
  ["no state", b64(JSON.stringify({ ...ok, state: undefined })), "state: is required"],
  ["a state that is neither", b64(JSON.stringify({ ...ok, state: "on" })), 'state: must be "present" or "absent"'],
  [
    "a storage account as the scale set",
    b64(JSON.stringify({ ...ok, scaleSetId: `${RG}/Microsoft.Storage/storageAccounts/x` })),
    'scaleSetId: names provider type "Microsoft.Storage/storageAccounts", not Microsoft.Compute/virtualMachineScaleSets',
  ],
  [
    "an application gateway's listener (not a pool)",
    b64(JSON.stringify({ ...ok, backendPoolId: `${RG}/Microsoft.Network/applicationGateways/gw/httpListeners/p` })),
    'backendPoolId: names "Microsoft.Network/applicationGateways/…/httpListeners", not Microsoft.Network/loadBalancers/…/backendAddressPools, …/inboundNatPools or Microsoft.Network/applicationGateways/…/backendAddressPools',
  ],
  [
    "an instance ID as the scale set",
    b64(JSON.stringify({ ...ok, scaleSetId: `${DEMO.scaleSetId}/virtualMachines/0` })),
    "scaleSetId: is not a scale set ID (/subscriptions/{id}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachineScaleSets/{name})",
  ],
  [
    "a .. segment",
    b64(
      JSON.stringify({
        ...ok,
        scaleSetId: `${RG}/Microsoft.Compute/virtualMachineScaleSets/../../../../resourceGroups/other/providers/Microsoft.Compute/virtualMachineScaleSets/x`,
      }),
    ),
    'scaleSetId: must not contain "." or ".." segments',
  ],
  [
    "an encoded separator",
    b64(JSON.stringify({ ...ok, scaleSetId: `${RG}/Microsoft.Compute/virtualMachineScaleSets/a%2F..%2Fb` })),
    "scaleSetId: must not contain encoded characters or backslashes",
  ],
  [
    "a backslash",
    b64(
      JSON.stringify({ ...ok, backendPoolId: DEMO.poolId.replace("/backendAddressPools/", "\\backendAddressPools\\") }),
    ),
    "backendPoolId: must not contain encoded characters or backslashes",
  ],
  [
    "a scale set outside POOLSYNC_SCOPES",
    b64(JSON.stringify({ ...ok, scaleSetId: DEMO.scaleSetId.replace(SUB, OTHER_SUB) })),
    `scaleSetId: ${DEMO.scaleSetId.replace(SUB, OTHER_SUB)} is outside POOLSYNC_SCOPES`,
  ],
  [
    "a pool on a load balancer outside POOLSYNC_SCOPES",
    b64(JSON.stringify({ ...ok, backendPoolId: DEMO.poolId.replace(SUB, OTHER_SUB) })),
    `backendPoolId: ${DEMO.poolId.replace(SUB, OTHER_SUB)} is outside POOLSYNC_SCOPES`,
  ],
  // 47 KiB of JSON is just under 64 KiB once base64-encoded: about the most a Storage queue message holds.
  [
    "a 64 KiB message (JSON)",
    b64(JSON.stringify({ ...ok, padding: "x".repeat(47 * 1024) })),
    "message is over 16384 characters",
  ],
  ["a 64 KiB message (text)", b64("y".repeat(47 * 1024)), `message is ${47 * 1024} characters, over 16384`],
  [
    "base64 of bytes that are not UTF-8",
    Buffer.from([0xff, 0xfe, 0x00, 0x81, 0xc3]).toString("base64"),
    "message is 5 bytes that are not UTF-8 text (expected base64 of a JSON object)",
  ],
  [
    "an attempt out of range",
    b64(JSON.stringify({ v: 1, kind: "reconcile", scaleSetId: DEMO.scaleSetId, reason: "x", attempt: 5000 })),
    "attempt: Too big: expected number to be <=1000",
  ],
  [
    "a request id with spaces",
    b64(JSON.stringify({ ...ok, requestId: "change 4711" })),
    "requestId: may hold only letters, digits and _ . : -",
  ],
  ["a date that is none", b64(JSON.stringify({ ...ok, declaredAt: "yesterday" })), "declaredAt: Invalid ISO datetime"],
  [
    "a declaredAt far in the future (it would outrank every later declaration)",
    b64(JSON.stringify({ ...ok, declaredAt: "2099-01-01T00:00:00Z" })),
    "declaredAt: 2099-01-01T00:00:00Z is more than 5 minutes in the future (it would outrank every later declaration)",
  ],
  [
    "a pool POOLSYNC_BINDINGS does not let the scale set join",
    b64(JSON.stringify({ ...ok, backendPoolId: PUBLIC_POOL })),
    `backendPoolId: ${PUBLIC_POOL} is not a pool POOLSYNC_BINDINGS lets ${DEMO.scaleSetId} join: rule 1 (${BINDING}) allows other pools only`,
  ],
  [
    "an absent on a pool POOLSYNC_BINDINGS does not cover (removing is a change too)",
    b64(JSON.stringify({ ...ok, backendPoolId: PUBLIC_POOL, state: "absent" })),
    `backendPoolId: ${PUBLIC_POOL} is not a pool POOLSYNC_BINDINGS lets ${DEMO.scaleSetId} join: rule 1 (${BINDING}) allows other pools only`,
  ],
];

let app: IntakeApp;
type PoisonEntry = { reason?: string; received?: string; raw: string };
const poison: PoisonEntry[] = [];

beforeAll(async () => {
  app = await startIntakeApp({ reconcile: true, env: { POOLSYNC_BINDINGS: BINDING } });
  await app.queue.createIfNotExists();
  for (const [, text] of cases) await app.queue.sendMessage(text);
  // Not base64 at all: the host cannot decode it, so poolsync never sees it; it goes to the poison queue as it came.
  await app.queue.sendMessage("!!! not base64 ~~~");
  const total = cases.length + 1;
  await waitFor(
    async () =>
      (await app.poison.getProperties().catch(() => ({ approximateMessagesCount: 0 }))).approximateMessagesCount ?? 0,
    (n) => n >= total,
    `${total} poison messages`,
    40_000,
  );
  for (let i = 0; i < 10 && poison.length < total; i++) {
    const got = await app.poison.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 600 });
    for (const m of got.receivedMessageItems) {
      const text = Buffer.from(m.messageText, "base64").toString("utf8");
      let parsed: { reason?: string; received?: string } = {};
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        // the host's copy of an undecodable message
      }
      poison.push({ ...parsed, raw: m.messageText });
    }
  }
}, 60_000);
afterAll(async () => {
  await app?.stop();
});

describe("bad queue messages → poison with the reason, nothing written, nothing crashing", () => {
  it.each(cases)("%s", (_name, text, reason) => {
    const decoded = Buffer.from(text, "base64");
    const sent = decoded.toString("utf8");
    const entry = poison.find(
      (p) =>
        p.reason === reason &&
        (p.received === undefined || sent.startsWith(p.received.slice(0, 200)) || p.received.includes('"Buffer"')),
    );
    expect(
      entry,
      `poison entry with reason ${reason}; got ${JSON.stringify(poison.map((p) => p.reason))}`,
    ).toBeDefined();
  });

  it("every poison entry but the undecodable one carries a reason and what was received; the undecodable one is copied as it came", () => {
    const withReason = poison.filter((p) => p.reason !== undefined);
    expect(withReason).toHaveLength(cases.length);
    expect(withReason.every((p) => typeof p.received === "string" && p.received.length > 0)).toBe(true);
    expect(poison.filter((p) => p.reason === undefined).map((p) => p.raw)).toEqual(["!!! not base64 ~~~"]);
  });

  it("made no ARM call, stored no declaration and left nothing on the work queue", async () => {
    expect(app.sim!.control.stats().requests).toBe(0);
    expect(await app.membershipRows()).toEqual([]);
    expect((await app.queue.getProperties()).approximateMessagesCount).toBe(0);
  });

  it("still applies a good declaration afterwards", async () => {
    await app.queue.sendMessage(b64(JSON.stringify({ ...ok, requestId: "after-the-bad-ones" })));
    const rows = await waitFor(
      () => app.membershipRows(),
      (r) => r.some((x) => x.requestId === "after-the-bad-ones" && x.outcomeKind === "applied"),
      "the good declaration applied",
    );
    expect(rows).toHaveLength(1);
    const pools = app.sim!.control.poolMembers(DEMO.poolId);
    expect(pools.length).toBe(2); // both instances of the demo scale set
  });
});
