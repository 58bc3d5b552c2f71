import { randomUUID } from "node:crypto";
import type { QueueClient } from "@azure/storage-queue";
import { RandomizedExponentialBackoff } from "./backoff";
import { QUEUE_MIN_POLLING_INTERVAL_MS, type QueueHostOptions } from "./hostConfig";
import { InFlight, Sleeper } from "./inflight";
import type { InvocationInput } from "./invoke";
import {
  decodeMessageBody,
  queueBindingData,
  queueTriggerInput,
  type DecodedBody,
  type ReceivedMessage,
} from "./queueMessage";
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
export const LEASE_SECONDS = 600;

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
  readonly #rules: QueueRules;
  #loop: Promise<void> | undefined;

  constructor(options: QueueListenerOptions) {
    this.#o = options;
    this.#rules = {
      queue: options.queue,
      poison: new PoisonQueue(options.poisonQueue),
      options: options.options,
      log: options.log,
      functionName: options.functionName,
    };
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
        const res = await this.#o.queue.receiveMessages({
          numberOfMessages: this.#o.options.batchSize,
          visibilityTimeout: LEASE_SECONDS,
        });
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
    await settleQueueMessage(msg, this.#rules, (body) => {
      const metadata = queueBindingData(msg, body.text, sysBindingData(this.#o.functionName, new Date(), randomUUID()));
      return this.#o.inFlight.run(() =>
        this.#o.invoke({
          inputData: [{ name: this.#o.bindingName, data: queueTriggerInput(body) }],
          triggerMetadata: toHostTriggerMetadata(metadata),
        }),
      );
    });
  }
}

export type RawMessage = ReceivedMessage & { messageText: string };
type DecodedText = Extract<DecodedBody, { ok: true }>;

/**
 * How the host ended with a message: deleted after a success, visible again after a failure, poisoned; or
 * abandoned by a host that died with it (it comes back when its lease runs out).
 */
export type Settled = "completed" | "released" | "poisoned" | "abandoned";

export interface QueueRules {
  queue: QueueClient;
  /** `<queue>-poison`, created on first use as the host does. */
  poison: PoisonQueue;
  options: Pick<QueueHostOptions, "maxDequeueCount" | "visibilityTimeoutMs" | "messageEncoding">;
  log: (message: string) => void;
  /** Names the function in the host's log lines. */
  functionName: string;
  /** How long a message is taken for, renewed at half-time while it runs (default: the host's 10 minutes). */
  leaseSeconds?: number;
  /** Settles when the host dies: its messages are left as they are, their leases no longer renewed. */
  died?: Promise<unknown>;
}

/** The poison queue, created on the first message it takes. */
export class PoisonQueue {
  #created: Promise<unknown> | undefined;

  constructor(readonly client: QueueClient) {}

  async send(messageText: string): Promise<void> {
    this.#created ??= this.client.createIfNotExists().catch((err: unknown) => {
      this.#created = undefined;
      throw err;
    });
    await this.#created;
    // The raw text, unchanged: re-encoding the decoded body would give the same text for valid messages, and an
    // undecodable one must arrive as it was for anyone to inspect it.
    await this.client.sendMessage(messageText);
  }
}

/**
 * The host's QueueProcessor for one received message: one already dequeued more than maxDequeueCount times (its
 * function crashed the process) and one that cannot be decoded go to the poison queue without running; otherwise
 * `run` runs with the lease renewed at half-time; success deletes the message; failure makes it visible again
 * after visibilityTimeout, and the maxDequeueCount-th failure copies it to the poison queue and deletes it.
 */
export async function settleQueueMessage(
  msg: RawMessage,
  rules: QueueRules,
  run: (body: DecodedText) => Promise<unknown>,
): Promise<Settled> {
  const { options } = rules;
  const poisonName = rules.poison.client.name;
  if (msg.dequeueCount > options.maxDequeueCount) {
    rules.log(
      `Message ${msg.messageId} was dequeued ${msg.dequeueCount} times (more than maxDequeueCount ${options.maxDequeueCount}); moving it to '${poisonName}'.`,
    );
    return poison(msg, rules);
  }
  const body = decodeMessageBody(msg.messageText, options.messageEncoding);
  if (!body.ok) {
    rules.log(`Message ${msg.messageId}: ${body.reason}; moving it to '${poisonName}'.`);
    return poison(msg, rules);
  }
  const lease = { popReceipt: msg.popReceipt };
  const leaseSeconds = rules.leaseSeconds ?? LEASE_SECONDS;
  const renew = setInterval(
    () => {
      rules.queue.updateMessage(msg.messageId, lease.popReceipt, undefined, leaseSeconds).then(
        (r) => (lease.popReceipt = r.popReceipt ?? lease.popReceipt),
        () => undefined, // the next renewal or the settle below meets the same problem
      );
    },
    (leaseSeconds * 1000) / 2,
  );
  let succeeded = false;
  try {
    const ran = run(body).then(() => "ran" as const);
    ran.catch(() => undefined); // a dead host's invocation may still fail: nobody is left to hear it
    if (rules.died) {
      if ((await Promise.race([ran, rules.died.then(() => "died" as const)])) === "died") return "abandoned";
    } else await ran;
    succeeded = true;
  } catch (err) {
    rules.log(
      `Executed '${rules.functionName}' (Failed, dequeueCount=${msg.dequeueCount}): ${(err as Error)?.message ?? String(err)}`,
    );
  } finally {
    clearInterval(renew);
  }
  const current = { ...msg, popReceipt: lease.popReceipt };
  if (succeeded) {
    await ignoreGone(rules.queue.deleteMessage(current.messageId, current.popReceipt));
    return "completed";
  }
  if (msg.dequeueCount >= options.maxDequeueCount) {
    rules.log(
      `Message has reached MaxDequeueCount of ${options.maxDequeueCount}. Moving message to queue '${poisonName}'.`,
    );
    return poison(current, rules);
  }
  await ignoreGone(
    rules.queue.updateMessage(
      msg.messageId,
      current.popReceipt,
      undefined,
      Math.round(options.visibilityTimeoutMs / 1000),
    ),
  );
  return "released";
}

async function poison(msg: RawMessage, rules: QueueRules): Promise<Settled> {
  await rules.poison.send(msg.messageText);
  await ignoreGone(rules.queue.deleteMessage(msg.messageId, msg.popReceipt));
  return "poisoned";
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
