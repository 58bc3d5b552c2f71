import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TargetCache } from "../../src/azure/targets/targetCache";
import { DEMO } from "../support/harness";
import { eventGridEvent } from "../support/armEventSamples";
import { scaleSetRef } from "../support/refs";
import { startIntakeApp, type IntakeApp } from "../intake/support";
import { declaredDemo, type EventWebhook } from "./eventWebhook";
import { EVENTS_AT_ONCE } from "../../src/app/eventGate";
import { testStorageConnectionString } from "../../devkit/storage";
import { startTableCounter, type TableCounter } from "../support/tableCounter";

/**
 * Batches as large as Event Grid sends them (at most 5,000 events or 1 MB), POSTed to the local runtime's webhook,
 * which invokes the built onResourceEvent once per event, all at once, as the Event Grid extension does. Each
 * invocation of an event poolsync holds something for makes a few Table round trips; started together, a thousand of
 * them put a thousand requests in front of storage at once, each request's timeout (POOLSYNC_TABLE_TIMEOUT_SECONDS)
 * running while it waited its turn: on a loaded machine (or with the timeout at 1 s) the last ones timed out, and the
 * whole batch answered 500, which Event Grid re-sends. How long a request waits is the machine's; how many the app puts in front of storage at once is
 * the app's, so that is what is counted, by an HTTP hop in front of Azurite's Table endpoint (test/support/
 * tableCounter.ts). Above Event Grid's limits the webhook answers 413. A batch of 600 odd events (duplicates, mixed
 * casing, trailing slashes, some malformed) is one 202 and one reconcile too.
 */

const WRITE = "Microsoft.Compute/virtualMachineScaleSets/write";
const VM_WRITE = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write";
const instanceUri = (i: number) => `${DEMO.scaleSetId}/virtualMachines/${i}`;
const ref = scaleSetRef(DEMO.scaleSetId);

let app: IntakeApp;
let hook: EventWebhook;
let cache: TargetCache;
let table: TableCounter;
/** A handling's requests go one after another; a few more may be in flight for the queue trigger's reconcile. */
const MOST_IN_FLIGHT = EVENTS_AT_ONCE + 8;
const post = (body: unknown) => hook.post(body);
const freshRows = () => hook.freshRows();

async function expectAllStaleAndOneReconcile(): Promise<void> {
  const p = await cache.readPartition(ref);
  expect(p.scaleSet?.stale).toBe(true);
  expect([...p.instances.values()].every((e) => e.stale)).toBe(true);
  // However many events: one reconcile per debounce window.
  expect((await app.queue.getProperties()).approximateMessagesCount).toBe(1);
}

async function expectUntouched(): Promise<void> {
  const p = await cache.readPartition(ref);
  expect(p.scaleSet?.stale).toBe(false);
  expect([...p.instances.values()].some((e) => e.stale)).toBe(false);
  expect((await app.queue.getProperties()).approximateMessagesCount).toBe(0);
}

/** An ARM event as Microsoft's samples show it, about 1.5 KB: Event Grid's 1 MB holds about 700 of them. */
const sampleEvent = (i: number) => {
  const uri = i % 3 === 0 ? DEMO.scaleSetId : instanceUri(i % 2);
  return eventGridEvent({
    resourceUri: uri,
    operationName: uri === DEMO.scaleSetId ? WRITE : VM_WRITE,
    id: `full-${i}`,
    clientRequestId: `other-${i}`,
  });
};

const RESOURCE_WRITE = "Microsoft.Resources.ResourceWriteSuccess";
const ELSEWHERE = DEMO.scaleSetId.replace("/resourceGroups/etag/", "/resourceGroups/elsewhere/");
/** What the declared scale set's events name in turn: its model, then each instance. */
const HELD = [DEMO.scaleSetId, instanceUri(0), instanceUri(1)];

/**
 * An ARM event with the fields the handler reads (about 450 bytes). Three in ten name the declared scale set or one of
 * its instances (about 6.4 Table requests each); the others a scale set of a resource group outside POOLSYNC_SCOPES
 * (answered without storage), as a subscription's events do. Enough to put hundreds of handlings in front of storage
 * at once without a bound, while the suite's load on the Azurite every test shares stays near the 600-event case's.
 */
const armEvent = (i: number) => {
  const uri = i % 10 < 3 ? (HELD[i % 10] as string) : ELSEWHERE;
  return {
    id: `arm-${i}`,
    eventType: RESOURCE_WRITE,
    subject: uri,
    eventTime: "2026-12-02T10:00:00.000Z",
    dataVersion: "2",
    data: {
      resourceUri: uri,
      operationName: uri.includes("/virtualMachines/") ? VM_WRITE : WRITE,
      httpRequest: { clientRequestId: `other-${i}` },
      claims: { appid: "aaaaaaaa-0000-0000-0000-000000000000" },
    },
  };
};

/**
 * 5,000 events fit in 1 MB only when small: ARM events with what the handler reads and no more (about 240 bytes): 300
 * of the declared scale set, 2,700 of the resource group outside the scopes; and 2,000 events of other types (about 60
 * bytes), as a subscription wider than poolsync's scopes delivers them.
 */
const compactEvent = (i: number) => {
  const kind = i % 50;
  if (kind < 3) return { id: `c${i}`, eventType: RESOURCE_WRITE, subject: HELD[kind], data: {} };
  if (kind < 30) return { id: `x${i}`, eventType: RESOURCE_WRITE, subject: ELSEWHERE, data: {} };
  return { id: `o${i}`, eventType: "Other.Event", data: {} };
};

beforeAll(async () => {
  const storage = testStorageConnectionString();
  table = await startTableCounter(/TableEndpoint=([^;]+)/.exec(storage)![1]!);
  app = await startIntakeApp({
    reconcile: true,
    env: {
      AzureWebJobsStorage: storage.replace(/TableEndpoint=[^;]+/, `TableEndpoint=${table.endpoint}`),
      POOLSYNC_SCOPES: `/subscriptions/${DEMO.subscription}/resourceGroups/etag`,
      POOLSYNC_EVENT_DEBOUNCE_SECONDS: "30",
    },
  });
  hook = await declaredDemo(app, "batches-suite");
  cache = hook.cache;
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await table?.stop();
});

describe("batches as large as Event Grid sends them are taken", () => {
  it("1,000 ARM events, 300 of the declared scale set → 202, every row stale, one reconcile", async () => {
    await freshRows();
    const body = JSON.stringify(Array.from({ length: 1000 }, (_, i) => armEvent(i)));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1_048_576);
    table.reset();
    const res = await post(body);
    expect(res.status, await res.clone().text()).toBe(202);
    expect(table.maxInFlight()).toBeLessThanOrEqual(MOST_IN_FLIGHT);
    await expectAllStaleAndOneReconcile();
  }, 180_000);

  it("5,000 events in under 1 MB → 202, every row stale, one reconcile", async () => {
    await freshRows();
    const body = JSON.stringify(Array.from({ length: 5000 }, (_, i) => compactEvent(i)));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1_048_576);
    table.reset();
    const res = await post(body);
    expect(res.status, await res.clone().text()).toBe(202);
    expect(table.maxInFlight()).toBeLessThanOrEqual(MOST_IN_FLIGHT);
    await expectAllStaleAndOneReconcile();
  }, 180_000);
});

describe("above Event Grid's limits the webhook answers 413 and invokes nothing", () => {
  it("5,001 events", async () => {
    await freshRows();
    const res = await post(Array.from({ length: 5001 }, (_, i) => compactEvent(i)));
    expect(res.status).toBe(413);
    expect(await res.text()).toBe("The batch holds 5001 events; Event Grid sends at most 5000 in one.");
    await expectUntouched();
  });

  it("more than 1 MB", async () => {
    await freshRows();
    const body = JSON.stringify(Array.from({ length: 800 }, (_, i) => sampleEvent(i)));
    expect(Buffer.byteLength(body)).toBeGreaterThan(1_048_576);
    const res = await post(body);
    expect(res.status).toBe(413);
    expect(await res.text()).toBe(
      `The batch is ${Buffer.byteLength(body)} bytes; Event Grid sends at most 1048576 bytes in one.`,
    );
    await expectUntouched();
  });
});

describe("a huge batch of odd events", () => {
  // Each event costs a handful of Table round trips (read the row, mark stale, list declarations, claim the window):
  // 1,000 took 13 s alone on Azurite on 2 cores and 37 s under load, past Event Grid's 30 s delivery timeout.
  // So 600 here, and the duration is recorded rather than asserted tightly (see docs/faults.md, open points).
  it("600 events (duplicates, mixed casing, trailing slashes, some malformed) → one 202, rows stale, one reconcile", async () => {
    await freshRows();
    const batch: unknown[] = [];
    for (let i = 0; i < 600; i++) {
      const uri =
        i % 3 === 0 ? instanceUri(i % 2).toUpperCase() : i % 3 === 1 ? `${instanceUri(i % 2)}/` : DEMO.scaleSetId;
      const e = eventGridEvent({
        resourceUri: uri,
        operationName: uri === DEMO.scaleSetId ? WRITE : VM_WRITE,
        id: `big-${i % 250}`,
        clientRequestId: `other-${i}`,
      });
      batch.push(i % 50 === 7 ? { ...e, data: null } : e);
    }
    const bytes = JSON.stringify(batch).length;
    expect(bytes).toBeGreaterThan(300_000); // a good part of Event Grid's 1 MB batch limit
    const started = Date.now();
    const res = await post(batch);
    expect(res.status).toBe(202);
    expect(Date.now() - started).toBeLessThan(60_000);
    const p = await cache.readPartition(ref);
    expect(p.scaleSet?.stale).toBe(true);
    expect([...p.instances.values()].every((e) => e.stale)).toBe(true);
    // However many events: one reconcile per debounce window.
    expect((await app.queue.getProperties()).approximateMessagesCount).toBe(1);
    await app.queue.clearMessages();
  }, 90_000);
});
