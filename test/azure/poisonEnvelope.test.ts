import { QueueClient } from "@azure/storage-queue";
import { describe, expect, it } from "vitest";
import { MAX_QUEUE_MESSAGE_CHARS, StorageWorkQueue } from "../../src/azure/workQueue";
import { decodeQueueBody } from "../support/queueBody";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/**
 * A message refused for being bad must reach the poison queue with its reason, whatever it holds: 32 KiB of control
 * characters become 192 KiB of JSON escapes, three times the queue's limit, once base64 is added.
 */
describe("the poison envelope on Azurite's queue", () => {
  it.each([
    ["control characters", "\u0001".repeat(32 * 1024)],
    ["quotes and backslashes", '"\\'.repeat(16 * 1024)],
    ["multi-byte text", "€".repeat(32 * 1024)],
  ])("keeps the reason for %s, cut to fit 64 KiB", async (_what, received) => {
    const cs = testStorageConnectionString();
    const name = uniqueName("pz-");
    const q = new StorageWorkQueue(new QueueClient(cs, name), new QueueClient(cs, `${name}-poison`));
    await q.poison.createIfNotExists();
    await q.sendToPoison(received, "message is not JSON");
    const [m] = (await q.poison.peekMessages()).peekedMessageItems;
    expect(m!.messageText.length).toBeLessThanOrEqual(MAX_QUEUE_MESSAGE_CHARS);
    const entry = decodeQueueBody(m!.messageText) as { reason: string; received: string; receivedChars?: number };
    expect(entry.reason).toBe("message is not JSON");
    expect(received.startsWith(entry.received)).toBe(true);
    expect(entry.received.length).toBeGreaterThan(1000);
    expect(entry.receivedChars).toBe(received.length);
    await q.poison.delete();
  });
});
