import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalRuntime, type LocalRuntime } from "../../local/host/runtime";
import { encodeMessageBody } from "../../local/host/queueMessage";
import { APP_DIR, FIXTURE_GLOB, fixtureSettings, queueService, readRecords, waitFor } from "./support";

/**
 * The runtime against real parts: Azurite for the queue, real HTTP for the webhook and the HTTP routes.
 * One runtime for the file (settings go to process.env, so runtimes in one process must not overlap).
 */
const fixture = fixtureSettings();
let rt: LocalRuntime;
const lines: string[] = [];

beforeAll(async () => {
  await queueService().getQueueClient(fixture.queue).create();
  rt = await startLocalRuntime({
    webhookKey: "runtime-test-webhook-key",
    appDir: APP_DIR,
    entryGlob: FIXTURE_GLOB,
    settings: fixture.settings,
    port: 0,
    timerStatus: "memory",
    queues: {
      maxPollingIntervalMs: 200,
      visibilityTimeoutMs: 0,
      maxDequeueCount: 3,
      batchSize: 8,
      newBatchThreshold: 4,
    },
    log: () => undefined,
    print: (l) => lines.push(l),
  });
});

afterAll(async () => {
  await rt?.stop();
});

const records = (fn: string) => readRecords(fixture.file).filter((r) => r.fn === fn);
const webhook = (functionName: string, eventType: string | undefined, body: unknown) =>
  fetch(`${rt.url}/runtime/webhooks/eventgrid?functionName=${functionName}&code=runtime-test-webhook-key`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(eventType ? { "aeg-event-type": eventType } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

const gridEvent = (id: string, subject: string) => ({
  id,
  topic: "/subscriptions/s1",
  subject,
  eventType: "Microsoft.Resources.ResourceWriteSuccess",
  eventTime: "2024-01-01T00:00:00Z",
  data: { resourceUri: subject },
  dataVersion: "1",
  metadataVersion: "1",
});

describe("startup", () => {
  it("lists each function with its trigger and URL", () => {
    const out = lines.join("\n");
    expect(out).toContain(`fixtureItem: [GET,PUT] ${rt.url}/api/items/{id}`);
    expect(out).toContain(`fixtureHello: [GET] ${rt.url}/api/fixtureHello`);
    expect(out).toContain(`fixtureQueue: queueTrigger  queue=${fixture.queue} connection=AzureWebJobsStorage`);
    expect(out).toContain(
      `fixtureEvents: eventGridTrigger  ${rt.url}/runtime/webhooks/eventgrid?functionName=fixtureEvents`,
    );
    expect(out).toMatch(/fixtureTimer: timerTrigger {2}schedule="0 0 0 1 1 \*" next=/);
    expect(rt.functions.find((f) => f.name === "fixtureQueue")?.queueName).toBe(fixture.queue);
  });
});

describe("Event Grid webhook", () => {
  it("answers the subscription validation handshake with the code", async () => {
    const res = await webhook("fixtureEvents", "SubscriptionValidation", [
      {
        id: "v1",
        eventType: "Microsoft.EventGrid.SubscriptionValidationEvent",
        data: { validationCode: "512d38b6-c7b8-40c8-89fe-f46f9e9622b6" },
      },
    ]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ validationResponse: "512d38b6-c7b8-40c8-89fe-f46f9e9622b6" });
  });

  it("invokes once per event of an array, with the event as plain JSON, and answers 202", async () => {
    const res = await webhook("fixtureEvents", "Notification", [gridEvent("e1", "/a/one"), gridEvent("e2", "/a/two")]);
    expect(res.status).toBe(202);
    const got = records("fixtureEvents").filter((r) => ["e1", "e2"].includes((r.input as { id: string }).id));
    expect(got.map((r) => (r.input as { id: string }).id).sort()).toEqual(["e1", "e2"]);
    expect(got[0]?.input).toEqual(
      gridEvent((got[0]?.input as { id: string }).id, (got[0]?.input as { subject: string }).subject),
    );
  });

  it("takes a single CloudEvents 1.0 object", async () => {
    const ce = {
      specversion: "1.0",
      id: "ce1",
      source: "/subscriptions/s1",
      type: "Microsoft.Resources.ResourceWriteSuccess",
      subject: "/c",
      data: { x: 1 },
    };
    expect((await webhook("fixtureEvents", "Notification", ce)).status).toBe(202);
    expect(records("fixtureEvents").find((r) => (r.input as { id: string }).id === "ce1")?.input).toEqual(ce);
  });

  it("answers 500 when one invocation of the batch throws, after running all of them", async () => {
    const res = await webhook("fixtureEvents", "Notification", [
      gridEvent("b1", "/ok"),
      gridEvent("b2", "/please-fail"),
      gridEvent("b3", "/ok-too"),
    ]);
    expect(res.status).toBe(500);
    expect(await res.text()).toContain("fixture event handler failed on /please-fail");
    const ids = records("fixtureEvents").map((r) => (r.input as { id: string }).id);
    expect(ids).toEqual(expect.arrayContaining(["b1", "b2", "b3"]));
  });

  it("404 for an unknown function, 400 without the aeg-event-type header", async () => {
    const unknown = await webhook("nope", "Notification", []);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe("cannot find function: 'nope'");
    expect((await webhook("fixtureEvents", undefined, [])).status).toBe(400);
  });
});

describe("HTTP functions", () => {
  it("routes /api/<route> with parameters, query, headers, body and the handler's status, headers and cookies", async () => {
    const res = await fetch(`${rt.url}/api/items/42?q=hi`, {
      method: "PUT",
      headers: { "x-fixture": "h" },
      body: "payload",
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-handled-by")).toBe("fixtureItem");
    expect(res.headers.get("set-cookie")).toBe("seen=yes; Path=/; HttpOnly");
    expect(await res.json()).toEqual({ id: "42", method: "PUT", q: "hi", body: "payload", header: "h" });
  });

  it("hands the query over as the host does: keys in any casing are one, repeated values joined with commas", async () => {
    const res = await fetch(`${rt.url}/api/items/42?q=hi&Q=there&q=again`, { method: "PUT", body: "" });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ q: "hi,there,again" });
  });

  it("the default route is the function name; methods not declared are no route (404)", async () => {
    const hello = await fetch(`${rt.url}/api/fixtureHello?name=you`);
    expect(hello.status).toBe(200);
    expect(await hello.text()).toBe("hello you");
    expect((await fetch(`${rt.url}/api/fixtureHello`, { method: "POST" })).status).toBe(404);
    expect((await fetch(`${rt.url}/api/items/1`, { method: "DELETE" })).status).toBe(404);
    expect((await fetch(`${rt.url}/api/nothing-here`)).status).toBe(404);
  });

  it("a handler that throws is a 500", async () => {
    expect((await fetch(`${rt.url}/api/items/boom`)).status).toBe(500);
  });
});

describe("queue trigger", () => {
  const queue = () => queueService().getQueueClient(fixture.queue);
  const send = (text: string) => queue().sendMessage(encodeMessageBody(text, "base64"));
  const byMarker = (marker: string) => () =>
    records("fixtureQueue").filter((r) => JSON.stringify(r.input).includes(marker));

  it("passes a JSON body as an object and the host's metadata", async () => {
    const sent = await send(JSON.stringify({ marker: "meta-1", n: 1 }));
    const [rec] = await waitFor(byMarker("meta-1"), (r) => r.length === 1, 10_000, "the message to be processed");
    expect(rec?.input).toEqual({ marker: "meta-1", n: 1 });
    const md = rec?.triggerMetadata ?? {};
    // QueueTrigger travels as the host's string; the library JSON-parses strings that parse, so it arrives an object.
    expect(md).toMatchObject({
      dequeueCount: 1,
      id: sent.messageId,
      queueTrigger: { marker: "meta-1", n: 1 },
      marker: "meta-1",
    });
    for (const key of ["insertionTime", "nextVisibleTime", "expirationTime", "popReceipt"])
      expect(md[key], key).toEqual(expect.any(String));
    expect(md.insertionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/);
    expect(md.sys).toMatchObject({ methodName: "fixtureQueue" });
    await waitFor(
      async () => (await queue().peekMessages()).peekedMessageItems.length,
      (n) => n === 0,
      5000,
      "the message to be deleted",
    );
  });

  it("passes a non-JSON body as a string", async () => {
    await send("plain text meta-2");
    const [rec] = await waitFor(byMarker("meta-2"), (r) => r.length === 1);
    expect(rec).toMatchObject({ input: "plain text meta-2", inputType: "string" });
  });

  it("retries a failing message until maxDequeueCount, then moves it to <queue>-poison", async () => {
    const body = JSON.stringify({ marker: "poison-1", fail: true });
    await send(body);
    const attempts = await waitFor(byMarker("poison-1"), (r) => r.length >= 3, 15_000, "three attempts");
    expect(attempts.map((r) => r.triggerMetadata?.dequeueCount)).toEqual([1, 2, 3]);
    const poison = queueService().getQueueClient(`${fixture.queue}-poison`);
    const peeked = await waitFor(
      async () => (await poison.peekMessages()).peekedMessageItems,
      (m) => m.length === 1,
      5000,
      "the poison message",
    );
    expect(Buffer.from(peeked[0]?.messageText ?? "", "base64").toString()).toBe(body);
    expect((await queue().peekMessages()).peekedMessageItems).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(byMarker("poison-1")()).toHaveLength(3);
  });

  it("moves a message that is not valid base64 to the poison queue without invoking", async () => {
    await queue().sendMessage("not base64 at all: bad-encoding-1");
    const poison = queueService().getQueueClient(`${fixture.queue}-poison`);
    await waitFor(
      async () => (await poison.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map((m) => m.messageText),
      (t) => t.includes("not base64 at all: bad-encoding-1"),
      10_000,
      "the undecodable message in the poison queue",
    );
    expect(records("fixtureQueue").some((r) => JSON.stringify(r).includes("bad-encoding-1"))).toBe(false);
  });
});
