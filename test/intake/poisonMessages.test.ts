import { QueueClient } from "@azure/storage-queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { StorageWorkQueue } from "../../src/azure/workQueue";
import { decodeQueueText, describePoison, peekPoison } from "../../src/intake/poisonMessages";
import { VMSS } from "./viewFixtures";

/**
 * src/intake/poisonMessages.ts: the poison queue as the status views show it: why each message is there (poolsync's
 * own reason, or the host's move after its failed deliveries), what it held, and the scale set it was about.
 */
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const received = JSON.stringify({ v: 1, kind: "reconcile", scaleSetId: VMSS, reason: "event" });

describe("peekPoison on Azurite's poison queue", () => {
  const cs = testStorageConnectionString();
  const name = uniqueName("pm-");
  const queue = new StorageWorkQueue(new QueueClient(cs, name), new QueueClient(cs, `${name}-poison`));
  beforeAll(async () => {
    await queue.poison.createIfNotExists();
    await queue.sendToPoison(received, "scaleSetId: is outside POOLSYNC_SCOPES");
    // What the host moves after maxDequeueCount failed deliveries: the message as it was.
    await queue.poison.sendMessage(b64(received));
    // A hand-put message in plain text.
    await queue.poison.sendMessage("hello there");
  });
  afterAll(async () => {
    await queue.poison.delete();
  });

  it("tells poolsync's refusals from the host's moves, with what each held and its scale set", async () => {
    const got = await peekPoison(queue);
    expect(got.map((m) => [m.reason, m.received, m.scaleSetId])).toEqual([
      ["scaleSetId: is outside POOLSYNC_SCOPES", received, VMSS],
      ["failed on every delivery (moved after maxDequeueCount)", received, VMSS],
      ["failed on every delivery (moved after maxDequeueCount)", "hello there", undefined],
    ]);
    expect(got[0]).toMatchObject({ dequeueCount: 0, insertedOn: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it("peeks as many as asked, and at least one however few are asked for", async () => {
    expect(await peekPoison(queue, 1)).toHaveLength(1);
    expect(await peekPoison(queue, 0)).toHaveLength(1);
  });
});

describe("decodeQueueText and describePoison", () => {
  it("decode base64 text, and leave plain text that only looks like base64 as it is", () => {
    expect(decodeQueueText(b64('{"a":1}'))).toBe('{"a":1}');
    expect(decodeQueueText("abcd")).toBe("abcd"); // base64 of bytes that are not UTF-8
    expect(decodeQueueText("not base64!")).toBe("not base64!");
  });

  it("do not take a message that merely has reason and received fields, but is a kind of message, for an envelope", () => {
    const declare = JSON.stringify({ kind: "declare", reason: "r", received: "x", scaleSetId: VMSS });
    expect(describePoison(b64(declare))).toEqual({
      reason: "failed on every delivery (moved after maxDequeueCount)",
      received: declare,
      scaleSetId: VMSS,
    });
  });
});
