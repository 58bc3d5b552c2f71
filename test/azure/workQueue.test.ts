import { QueueClient } from "@azure/storage-queue";
import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import { StorageWorkQueue } from "../../src/azure/workQueue";
import { parseQueueMessage } from "../../src/core/messages";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { decodeQueueBody } from "../support/queueBody";
import { REF } from "../support/targetPass";

/**
 * The work queue on Azurite's Storage Queue: what it sends is what the queue trigger reads (base64 JSON, the schema the
 * handler parses), a delay becomes the queue's visibility timeout, and the poison queue keeps the reason beside what was
 * received. (The poison envelope's size limit: test/azure/poisonEnvelope.test.ts.)
 */
const made: QueueClient[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((q) => q.deleteIfExists()));
});

/** A work queue over two queues of the test's own, not created yet; `timeScale` as a time-scaled simulator sets it. */
function workQueue(timeScale = 1) {
  const name = uniqueName("wq-");
  const queue = new QueueClient(testStorageConnectionString(), name);
  const poison = new QueueClient(testStorageConnectionString(), `${name}-poison`);
  made.push(queue, poison);
  const log = memoryLogger();
  return { q: new StorageWorkQueue(queue, poison, log, timeScale), log };
}

async function peeked(queue: QueueClient): Promise<unknown[]> {
  const got = await queue.peekMessages({ numberOfMessages: 32 });
  return got.peekedMessageItems.map((m) => decodeQueueBody(m.messageText));
}

/** Seconds from `sentAt` to when the last enqueue's message becomes visible, as the queue answered the send. */
function visibleAfterSeconds(log: ReturnType<typeof memoryLogger>, sentAt: number): number {
  const sent = log.lines.filter((l) => l.event === "enqueue").pop()!;
  // The queue answers in whole seconds (an HTTP date).
  return Math.round((Date.parse(sent.nextVisibleOn as string) - sentAt) / 1000);
}

describe("StorageWorkQueue", () => {
  it("a reconcile goes out as the queue trigger reads it: base64 JSON its handler parses, with attempt and fresh", async () => {
    const { q } = workQueue();
    await q.queue.create();
    await q.enqueueReconcile(REF.id, "declared", { attempt: 3, fresh: true, leading: true });
    const [body] = await peeked(q.queue);
    const parsed = parseQueueMessage(body);
    expect(parsed).toEqual({
      ok: true,
      message: expect.objectContaining({ kind: "reconcile", scaleSetId: REF.id, attempt: 3, fresh: true }),
    });
    // The leading mark travels as the previous version's reason prefix, which hosts of both versions read.
    expect(body).toMatchObject({ reason: "leading: declared" });
    expect(await q.depth()).toBe(1);
  });

  it("a delayed reconcile is hidden for the delay (the queue's visibility timeout), in real seconds under a time scale", async () => {
    const { q, log } = workQueue();
    await q.queue.create();
    const sentAt = Date.now();
    await q.enqueueReconcile(REF.id, "requeue", { delayMs: 90_000 });
    expect(await peeked(q.queue)).toEqual([]);
    expect(await q.depth()).toBe(1);
    expect(visibleAfterSeconds(log, sentAt)).toBeGreaterThanOrEqual(89);
    expect(visibleAfterSeconds(log, sentAt)).toBeLessThanOrEqual(91);

    // An hour of a simulator running 60 times faster than real time is a minute of the queue's.
    const scaled = workQueue(60);
    await scaled.q.queue.create();
    await scaled.q.enqueueReconcile(REF.id, "requeue", { delayMs: 3_600_000 });
    expect(scaled.log.lines.find((l) => l.event === "enqueue")).toMatchObject({ visibilityTimeoutSeconds: 60 });
  });

  it("a delay beyond the queue's 7 days is sent at 7 days, not refused by Storage", async () => {
    const { q, log } = workQueue();
    await q.queue.create();
    await q.enqueueReconcile(REF.id, "far", { delayMs: 30 * 24 * 3_600_000 });
    expect(log.lines.find((l) => l.event === "enqueue")).toMatchObject({ visibilityTimeoutSeconds: 7 * 24 * 3600 });
    expect(await q.depth()).toBe(1);
  });

  it("a declaration is sent as given; a message that can never succeed goes to poison with its reason", async () => {
    const { q } = workQueue();
    await Promise.all([q.queue.create(), q.poison.create()]);
    const declare = { v: 1, kind: "declare", scaleSetId: REF.id, requestId: "r-1" };
    await q.enqueueDeclare(declare as never);
    expect(await peeked(q.queue)).toEqual([declare]);

    await q.sendToPoison({ kind: "bogus" }, "kind: bogus is not a message kind");
    const [entry] = await q.peekPoison(32);
    expect(decodeQueueBody(entry!.messageText)).toMatchObject({
      reason: "kind: bogus is not a message kind",
      received: '{"kind":"bogus"}',
    });
    expect(await q.poisonDepth()).toBe(1);
  });

  it("queues not created yet read as empty (the status view before the first message), not as an error", async () => {
    const { q } = workQueue();
    expect(await q.depth()).toBe(0);
    expect(await q.poisonDepth()).toBe(0);
    expect(await q.peekPoison(32)).toEqual([]);
  });
});
