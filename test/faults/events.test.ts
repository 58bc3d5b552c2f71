import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TargetCache } from "../../src/azure/targets/targetCache";
import { DEMO } from "../support/harness";
import { cloudEvent, eventGridEvent } from "../support/armEventSamples";
import { scaleSetRef } from "../support/refs";
import { startIntakeApp, type IntakeApp } from "../intake/support";
import { declaredDemo, type EventWebhook } from "./eventWebhook";

/**
 * Adversarial ARM events through the local runtime's Event Grid webhook (the host's path, the built
 * onResourceEvent function): a bad event is completed (202), never a 500 that Event Grid would redeliver for a
 * day; odd casing and trailing slashes reach the same rows.
 */

const OTHER_SUB = "99999999-2222-3333-4444-555555555555";
const instanceUri = (i: number) => `${DEMO.scaleSetId}/virtualMachines/${i}`;
const WRITE = "Microsoft.Compute/virtualMachineScaleSets/write";
const VM_WRITE = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write";

let app: IntakeApp;
let hook: EventWebhook;
let cache: TargetCache;
const ref = scaleSetRef(DEMO.scaleSetId);
const post = (body: unknown) => hook.post(body);
const freshRows = () => hook.freshRows();

const eventsLogged = () => app.appLogs.filter((l) => l.event === "event" || l.event === "event.malformed");

beforeAll(async () => {
  app = await startIntakeApp({ reconcile: true, env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "30" } });
  hook = await declaredDemo(app, "events-suite");
  cache = hook.cache;
  await freshRows();
}, 60_000);
afterAll(async () => {
  await app?.stop();
});

describe("bad events are completed (202) without touching anything", () => {
  const bad: Array<[string, unknown, string | undefined]> = [
    [
      "neither schema",
      [{ id: "e1", subject: DEMO.scaleSetId, data: { resourceUri: DEMO.scaleSetId } }],
      "eventType: missing (neither Event Grid nor CloudEvents schema)",
    ],
    [
      "no data",
      [{ ...eventGridEvent({ resourceUri: DEMO.scaleSetId, operationName: WRITE, id: "e2" }), data: undefined }],
      "data: missing or not an object",
    ],
    [
      "data that is a string",
      [{ ...eventGridEvent({ resourceUri: DEMO.scaleSetId, operationName: WRITE, id: "e3" }), data: "oops" }],
      "data: missing or not an object",
    ],
    [
      "no id",
      [{ ...eventGridEvent({ resourceUri: DEMO.scaleSetId, operationName: WRITE }), id: undefined }],
      "id: missing",
    ],
    ["a CloudEvent without a type", { specversion: "1.0", id: "e4", source: "x", data: {} }, "type: missing"],
    [
      "no resourceUri and no subject",
      [
        {
          ...eventGridEvent({ resourceUri: DEMO.scaleSetId, operationName: WRITE, id: "e5" }),
          subject: undefined,
          data: { operationName: WRITE },
        },
      ],
      "data.resourceUri: missing (and no subject)",
    ],
    [
      "a storage event",
      [
        {
          ...eventGridEvent({ resourceUri: DEMO.scaleSetId, operationName: WRITE, id: "e6" }),
          eventType: "Microsoft.Storage.BlobCreated",
        },
      ],
      undefined,
    ],
    [
      "a write of another provider's resource",
      [
        eventGridEvent({
          resourceUri: `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers/Microsoft.Network/loadBalancers/etag-k8s`,
          operationName: "Microsoft.Network/loadBalancers/write",
          id: "e7",
        }),
      ],
      undefined,
    ],
    [
      "a scale set outside POOLSYNC_SCOPES",
      [
        eventGridEvent({
          resourceUri: DEMO.scaleSetId.replace(DEMO.subscription, OTHER_SUB),
          operationName: WRITE,
          id: "e8",
        }),
      ],
      undefined,
    ],
    ["a JSON number in the batch", [42], "event is not a JSON object"],
  ];

  it.each(bad)("%s → 202, nothing invalidated, nothing enqueued", async (name, body, malformedReason) => {
    const before = eventsLogged().length;
    const res = await post(body);
    expect(res.status).toBe(202);
    const p = await cache.readPartition(ref);
    expect(p.scaleSet?.stale).toBe(false);
    expect([...p.instances.values()].some((e) => e.stale)).toBe(false);
    expect((await app.queue.getProperties()).approximateMessagesCount).toBe(0);
    const logged = eventsLogged().slice(before);
    if (malformedReason)
      expect(logged).toContainEqual(expect.objectContaining({ event: "event.malformed", reason: malformedReason }));
    // Out of scope is worth seeing (a subscription filter too wide); events of other kinds are not poolsync's.
    else if (name.includes("outside POOLSYNC_SCOPES"))
      expect(logged.filter((l) => l.event === "event")).toEqual([
        expect.objectContaining({ eventId: "e8", outcome: "out-of-scope" }),
      ]);
    else expect(logged.filter((l) => l.event === "event")).toEqual([]);
  });

  it("a body that is not JSON → 400 from the webhook (the extension refuses it), not a 500 loop", async () => {
    const res = await post("{not json");
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("The request content should be parseable into a JSON object or array.");
  });
});

describe("odd casing and trailing slashes reach the same rows", () => {
  it.each([
    ["upper-case, trailing slash (Event Grid schema)", (u: string) => `${u.toUpperCase()}/`, false],
    ["lower-case, two trailing slashes (CloudEvents)", (u: string) => `${u.toLowerCase()}//`, true],
  ])("%s: instance and scale set marked stale, one reconcile enqueued", async (_n, mangle, cloud) => {
    await freshRows();
    const opts = {
      resourceUri: mangle(instanceUri(1)),
      operationName: VM_WRITE,
      id: `odd-${String(cloud)}`,
      clientRequestId: "someone-else",
    };
    const res = await post(cloud ? cloudEvent(opts) : [eventGridEvent(opts)]);
    expect(res.status).toBe(202);
    const p = await cache.readPartition(ref);
    expect(p.instances.get("1")?.stale).toBe(true);
    expect(p.instances.get("0")?.stale).toBe(false);
    expect(p.scaleSet?.stale).toBe(true);
    // The debounced reconcile waits on the queue (invisible for the window).
    expect((await app.queue.getProperties()).approximateMessagesCount).toBe(1);
    await app.queue.clearMessages();
  });

  it("a delete event for a live scale set (capitals, trailing slash) drops its rows but records nothing: a reconcile asks ARM", async () => {
    await freshRows();
    const res = await post([
      eventGridEvent({
        type: "Microsoft.Resources.ResourceDeleteSuccess",
        resourceUri: `${DEMO.scaleSetId.toUpperCase()}/`,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/delete",
        id: "del-1",
      }),
    ]);
    expect(res.status).toBe(202);
    const p = await cache.readPartition(ref);
    expect(p.scaleSet).toBeUndefined();
    expect(p.instances.size).toBe(0);
    // A late, replayed or forged delete must not stop repairs: the declaration stays as it was.
    expect((await app.membershipRows()).map((r) => r.outcomeKind)).toEqual(["applied"]);
    expect(app.appLogs.filter((l) => l.event === "event" && l.eventId === "del-1")).toEqual([
      expect.objectContaining({ outcome: "deleted+reconcile" }),
    ]);
    expect(app.appLogs.filter((l) => l.event === "enqueue" && String(l.reason).startsWith("delete event"))).toEqual([
      expect.objectContaining({ fresh: true, visibilityTimeoutSeconds: 30 }),
    ]);
    await app.queue.clearMessages();
    // The scale set is still there: the next reconcile finds it and the rows come back.
    await freshRows();
    expect((await app.membershipRows()).map((r) => r.outcomeKind)).toEqual(["applied"]);
  });
});
