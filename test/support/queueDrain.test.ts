import { QueueClient } from "@azure/storage-queue";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { outcomesOf, QueueDrain } from "../../local/stack/queueDrain";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/** The drain that tests, the soak and the benchmarks use settles messages by the host's rules. */

let queue: QueueClient;
let poison: QueueClient;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

beforeEach(async () => {
  const name = uniqueName("drain-");
  queue = new QueueClient(testStorageConnectionString(), name);
  poison = new QueueClient(testStorageConnectionString(), `${name}-poison`);
  await queue.create();
});
afterEach(async () => {
  await Promise.all([queue.deleteIfExists(), poison.deleteIfExists()]);
});

const poisoned = async () =>
  (
    await poison.peekMessages({ numberOfMessages: 32 }).catch(() => ({ peekedMessageItems: [] }))
  ).peekedMessageItems.map((m) => m.messageText);

describe("QueueDrain", () => {
  it("hands the handler the JSON body and the host's metadata, and deletes the message when it succeeds", async () => {
    await queue.sendMessage(b64(JSON.stringify({ hello: "world" })));
    const seen: unknown[] = [];
    const drain = new QueueDrain(queue, poison, async (body, meta) => {
      seen.push(body);
      return meta.dequeueCount;
    });
    expect(outcomesOf(await drain.drain())).toEqual([1]);
    expect(seen).toEqual([{ hello: "world" }]);
    expect((await queue.getProperties()).approximateMessagesCount).toBe(0);
  });

  it("a failure makes the message visible again; the maxDequeueCount-th failure moves it, as it was, to the poison queue", async () => {
    await queue.sendMessage(b64("always fails"));
    let runs = 0;
    const drain = new QueueDrain(
      queue,
      poison,
      async () => {
        runs++;
        throw new Error("boom");
      },
      { options: { maxDequeueCount: 3, visibilityTimeoutMs: 0 } },
    );
    const settled = (await drain.drain()).map((d) => d.settled);
    expect(settled).toEqual(["released", "released", "poisoned"]);
    expect(runs).toBe(3);
    expect(await poisoned()).toEqual([b64("always fails")]);
  });

  it("a message that is not base64 goes to the poison queue without running", async () => {
    await queue.sendMessage("not base64!");
    let runs = 0;
    const drain = new QueueDrain(queue, poison, async () => void runs++);
    expect((await drain.drain()).map((d) => d.settled)).toEqual(["poisoned"]);
    expect(runs).toBe(0);
    expect(await poisoned()).toEqual(["not base64!"]);
  });

  it("a host that dies abandons its messages where they are: they come back when the lease runs out", async () => {
    await queue.sendMessage(b64("{}"));
    let die: () => void = () => undefined;
    const died = new Promise<void>((r) => (die = r));
    const dying = new QueueDrain(queue, poison, () => new Promise<never>(() => undefined), { leaseSeconds: 1, died });
    const [delivery] = await dying.poll();
    die();
    expect((await delivery)?.settled).toBe("abandoned");
    await new Promise((r) => setTimeout(r, 1_500));
    const next = new QueueDrain(queue, poison, async (_body, meta) => meta.dequeueCount);
    expect(outcomesOf(await next.drain())).toEqual([2]);
  });
});
