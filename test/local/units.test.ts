import { describe, expect, it } from "vitest";
import { RandomizedExponentialBackoff } from "../../local/host/backoff";
import { handleEventGridWebhook } from "../../local/host/eventGridWebhook";
import { parseTimeSpan, queueOptionsFrom } from "../../local/host/hostConfig";
import { compileRoute, splitPath } from "../../local/host/httpRoute";
import { decodeMessageBody, queueBindingData } from "../../local/host/queueMessage";
import { resolvePlaceholders } from "../../local/host/settings";
import { toDotNetDateString } from "../../local/host/typedData";

describe("host.json queue settings", () => {
  it("parses TimeSpans and applies the extension's defaults", () => {
    expect(parseTimeSpan("00:00:02", "x")).toBe(2000);
    expect(parseTimeSpan("1.00:00:00.5", "x")).toBe(86_400_500);
    expect(() => parseTimeSpan("30", "maxPollingInterval")).toThrow(/maxPollingInterval: "30" is not a TimeSpan/);
    const o = queueOptionsFrom({ batchSize: 4 });
    expect(o).toMatchObject({
      batchSize: 4,
      maxDequeueCount: 5,
      visibilityTimeoutMs: 0,
      maxPollingIntervalMs: 60_000,
      messageEncoding: "base64",
    });
    expect(() => queueOptionsFrom({ batchSize: 33 })).toThrow(/batchSize: must be a whole number between 1 and 32/);
  });
});

describe("poll backoff", () => {
  it("grows exponentially on empty polls up to the maximum and resets when messages arrive", () => {
    const b = new RandomizedExponentialBackoff(100, 2000, () => 0.5);
    const empty = [1, 2, 3, 4, 5, 6].map(() => b.nextDelay(false));
    expect(empty).toEqual([100, 200, 400, 800, 1600, 2000]);
    expect(b.nextDelay(false)).toBe(2000);
    expect(b.nextDelay(true)).toBe(100);
    expect(b.nextDelay(false)).toBe(200);
  });
});

describe("queue messages", () => {
  it("decodes base64 strictly", () => {
    expect(decodeMessageBody(Buffer.from('{"a":1}').toString("base64"), "base64")).toMatchObject({
      ok: true,
      text: '{"a":1}',
    });
    expect(decodeMessageBody("not base64!", "base64")).toMatchObject({ ok: false });
    expect(decodeMessageBody("plain", "none")).toMatchObject({ ok: true, text: "plain" });
  });

  it("binding data: the metadata, then a JSON body's properties win (host behaviour)", () => {
    const msg = {
      messageId: "m1",
      popReceipt: "p",
      dequeueCount: 2,
      insertedOn: new Date(0),
      expiresOn: new Date(1),
      nextVisibleOn: new Date(2),
    };
    const data = queueBindingData(msg, '{"id":"from-body","x":1}', {});
    expect(data).toMatchObject({
      QueueTrigger: '{"id":"from-body","x":1}',
      DequeueCount: 2,
      Id: "from-body",
      x: 1,
      PopReceipt: "p",
    });
    expect(queueBindingData(msg, "text", {}).Id).toBe("m1");
  });
});

describe("settings", () => {
  it("resolves %NAME% and names a missing one", () => {
    expect(resolvePlaceholders("%Q%-x", { Q: "work" }, "queueName")).toBe("work-x");
    expect(() => resolvePlaceholders("%MISSING%", {}, 'Function "f" queueName')).toThrow(
      /"%MISSING%" does not resolve to a value; set MISSING/,
    );
  });

  it("writes dates as the host's JSON serialiser does", () => {
    expect(toDotNetDateString(new Date(2024, 0, 2, 3, 4, 5, 60))).toMatch(/^2024-01-02T03:04:05\.06[+-]\d\d:\d\d$/);
  });
});

describe("HTTP routes", () => {
  it("matches literals case-insensitively, parameters, optional and catch-all segments, constraints", () => {
    const r = compileRoute("api", "items/{id:int}/{tag?}");
    expect(r.match(splitPath("/API/Items/42"))).toEqual({ id: "42" });
    expect(r.match(splitPath("/api/items/42/red"))).toEqual({ id: "42", tag: "red" });
    expect(r.match(splitPath("/api/items/abc"))).toBeUndefined();
    expect(r.match(splitPath("/api/items/42/red/extra"))).toBeUndefined();
    expect(compileRoute("api", "files/{*path}").match(splitPath("/api/files/a/b%20c"))).toEqual({ path: "a/b c" });
  });
});

describe("Event Grid webhook rules", () => {
  const targets = new Map([["f", { bindingName: "e", invoke: async () => undefined }]]);
  it("404 for an unknown function before looking at the header", async () => {
    expect(await handleEventGridWebhook("nope", undefined, "[]", targets)).toMatchObject({
      status: 404,
      body: "cannot find function: 'nope'",
    });
  });
  it("reads a CloudEvents validation code from JSON-encoded data", async () => {
    const body = JSON.stringify({
      specversion: "1.0",
      type: "Microsoft.EventGrid.SubscriptionValidationEvent",
      data: JSON.stringify({ validationCode: "abc" }),
    });
    const r = await handleEventGridWebhook("f", "SubscriptionValidation", body, targets);
    expect(JSON.parse(r.body ?? "")).toEqual({ validationResponse: "abc" });
  });
  it("Unsubscribe is accepted, an unknown event type is a 400", async () => {
    expect((await handleEventGridWebhook("f", "Unsubscribe", "", targets)).status).toBe(202);
    expect((await handleEventGridWebhook("f", "Something", "[]", targets)).status).toBe(400);
  });
});
