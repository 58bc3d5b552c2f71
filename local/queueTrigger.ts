import { randomUUID } from "node:crypto";
import type { QueueClient } from "@azure/storage-queue";
import { RandomizedExponentialBackoff } from "./backoff";
import { QUEUE_MIN_POLLING_INTERVAL_MS, type QueueHostOptions } from "./hostConfig";
import { InFlight, Sleeper } from "./inflight";
import type { InvocationInput } from "./invoke";
import { decodeMessageBody, queueBindingData, queueTriggerInput, type ReceivedMessage } from "./queueMessage";
import { sysBindingData, toHostTriggerMetadata } from "./typedData";

export interface QueueListenerOptions {
  functionName: string;
  bindingName: string;
  queue: QueueClient;
  /** `<queue>-poison`, created on first use as the host does. */
  poisonQueue: QueueClient;
  options: QueueHostOptions;
  invoke: (input: InvocationInput) => Promise<unknown>;
  inFlight: InFlight;
  log: (message: string) => void;
  onError: (err: unknown) => void;
}

/** Messages are taken for 10 minutes and the lease renewed at half-time while the function runs (QueueListener). */
const LEASE_SECONDS = 600;

type RawMessage = ReceivedMessage & { messageText: string };

/**
 * The Storage Queues extension's QueueListener and QueueProcessor against one queue. Polls with up to batchSize
 * messages, runs them concurrently, polls again once fewer than newBatchThreshold are still running; empty polls
 * back off (RandomizedExponentialBackoff up to maxPollingInterval). Success deletes the message; failure makes it
 * visible again after visibilityTimeout; the maxDequeueCount-th failure copies it to `<queue>-poison` and deletes
 * it. A message that cannot be decoded goes to the poison queue at once, and one already dequeued more than
 * maxDequeueCount times (its function crashed the process) goes there without running again.
 */
export class QueueListener {
  readonly #o: QueueListenerOptions;
  readonly #sleeper = new Sleeper();
  readonly #processing = new Set<Promise<void>>();
  readonly #backoff: RandomizedExponentialBackoff;
  #loop: Promise<void> | undefined;
  #poisonCreated = false;

  constructor(options: QueueListenerOptions) {
    this.#o = options;
    this.#backoff = new RandomizedExponentialBackoff(
      Math.min(QUEUE_MIN_POLLING_INTERVAL_MS, options.options.maxPollingIntervalMs),
      options.options.maxPollingIntervalMs,
    );
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops polling, then waits for the messages already taken to finish (and be deleted, released or poisoned). */
  async stop(): Promise<void> {
    this.#sleeper.abort();
    await this.#loop;
    await Promise.all([...this.#processing]);
  }

  async #run(): Promise<void> {
    let foundSinceLastDelay = false;
    while (!this.#sleeper.aborted) {
      let batch: RawMessage[] = [];
      try {
        const res = await this.#o.queue.receiveMessages({ numberOfMessages: this.#o.options.batchSize, visibilityTimeout: LEASE_SECONDS });
        batch = res.receivedMessageItems;
      } catch (err) {
        // A missing queue (or a storage hiccup) is "no messages": back off and look again, as the host does.
        if ((err as { statusCode?: number }).statusCode !== 404) this.#o.onError(err);
      }
      if (this.#sleeper.aborted && batch.length === 0) return;
      if (batch.length === 0) {
        await this.#sleeper.sleep(this.#backoff.nextDelay(foundSinceLastDelay));
        foundSinceLastDelay = false;
        continue;
      }
      foundSinceLastDelay = true;
      for (const msg of batch) {
        const p = this.#process(msg).catch((err) => this.#o.onError(err));
        this.#processing.add(p);
        void p.finally(() => this.#processing.delete(p));
      }
      while (this.#processing.size > this.#o.options.newBatchThreshold) await Promise.race([...this.#processing]);
    }
  }

  async #process(msg: RawMessage): Promise<void> {
    const { options } = this.#o;
    if (msg.dequeueCount > options.maxDequeueCount) {
      this.#o.log(`Message ${msg.messageId} was dequeued ${msg.dequeueCount} times (more than maxDequeueCount ${options.maxDequeueCount}); moving it to '${this.#o.poisonQueue.name}'.`);
      await this.#poison(msg);
      return;
    }
    const body = decodeMessageBody(msg.messageText, options.messageEncoding);
    if (!body.ok) {
      this.#o.log(`Message ${msg.messageId}: ${body.reason}; moving it to '${this.#o.poisonQueue.name}'.`);
      await this.#poison(msg);
      return;
    }
    const lease = { popReceipt: msg.popReceipt };
    const renew = setInterval(() => {
      this.#o.queue.updateMessage(msg.messageId, lease.popReceipt, undefined, LEASE_SECONDS).then(
        (r) => (lease.popReceipt = r.popReceipt ?? lease.popReceipt),
        (err) => this.#o.onError(err),
      );
    }, (LEASE_SECONDS * 1000) / 2);
    let succeeded = false;
    try {
      const metadata = queueBindingData(msg, body.text, sysBindingData(this.#o.functionName, new Date(), randomUUID()));
      await this.#o.inFlight.run(() =>
        this.#o.invoke({
          inputData: [{ name: this.#o.bindingName, data: queueTriggerInput(body) }],
          triggerMetadata: toHostTriggerMetadata(metadata),
        }),
      );
      succeeded = true;
    } catch (err) {
      this.#o.log(`Executed '${this.#o.functionName}' (Failed, dequeueCount=${msg.dequeueCount}): ${(err as Error)?.message ?? String(err)}`);
    } finally {
      clearInterval(renew);
    }
    const current = { ...msg, popReceipt: lease.popReceipt };
    if (succeeded) {
      await this.#delete(current);
    } else if (msg.dequeueCount >= options.maxDequeueCount) {
      this.#o.log(`Message has reached MaxDequeueCount of ${options.maxDequeueCount}. Moving message to queue '${this.#o.poisonQueue.name}'.`);
      await this.#poison(current);
    } else {
      await ignoreGone(this.#o.queue.updateMessage(msg.messageId, current.popReceipt, undefined, Math.round(options.visibilityTimeoutMs / 1000)));
    }
  }

  async #poison(msg: RawMessage): Promise<void> {
    if (!this.#poisonCreated) {
      await this.#o.poisonQueue.createIfNotExists();
      this.#poisonCreated = true;
    }
    // The raw text, unchanged: re-encoding the decoded body would give the same text for valid messages, and an
    // undecodable one must arrive as it was for anyone to inspect it.
    await this.#o.poisonQueue.sendMessage(msg.messageText);
    await this.#delete(msg);
  }

  async #delete(msg: RawMessage): Promise<void> {
    await ignoreGone(this.#o.queue.deleteMessage(msg.messageId, msg.popReceipt));
  }
}

/** A message someone else took over (pop receipt mismatch) or that is gone is theirs to finish, not an error. */
async function ignoreGone(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== 404 && status !== 400) throw err;
  }
}
