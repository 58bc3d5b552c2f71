import type { QueueClient } from "@azure/storage-queue";
import { loadHostConfig, type QueueHostOptions } from "../host/hostConfig";
import { PoisonQueue, settleQueueMessage, type QueueRules, type RawMessage, type Settled } from "../host/queueTrigger";
import type { QueueMessageMeta } from "../../src/reconcile/handleQueueMessage";
import { findAppDir } from "../host/appDir";

/**
 * The queue trigger as the Functions host runs it, for code that calls the app's handler directly (the harness,
 * the tests of several instances, the soak, the benchmarks): polls of up to batchSize messages, each settled by
 * the host's own rules (local/host/queueTrigger.ts: dequeue count, poison queue, visibility timeout), with the app's
 * host.json settings unless told otherwise.
 */

export interface Delivery<T> {
  settled: Settled;
  /** The handler's answer when it ran to the end. */
  outcome?: T;
}

export interface QueueDrainOptions {
  /** Overrides of host.json's extensions.queues. */
  options?: Partial<QueueHostOptions>;
  leaseSeconds?: number;
  log?: (line: string) => void;
  /** Settles when the host running this drain dies: its messages are abandoned where they are. */
  died?: Promise<unknown>;
}

/**
 * The body as the Node.js worker hands it to the function: JSON parsed when it is JSON, else the text (bytes when not
 * UTF-8).
 */
function triggerValue(body: { text: string | undefined; bytes: Buffer }): unknown {
  if (body.text === undefined) return body.bytes;
  try {
    return JSON.parse(body.text);
  } catch {
    return body.text;
  }
}

export class QueueDrain<T> {
  readonly options: QueueHostOptions;
  readonly #rules: QueueRules;

  constructor(
    readonly queue: QueueClient,
    poison: QueueClient,
    private readonly handle: (body: unknown, meta: QueueMessageMeta) => Promise<T>,
    opts: QueueDrainOptions = {},
  ) {
    this.options = { ...loadHostConfig(findAppDir(__dirname)).queues, ...opts.options };
    this.#rules = {
      queue,
      poison: new PoisonQueue(poison),
      options: this.options,
      log: opts.log ?? (() => undefined),
      functionName: "applyBackendPools",
      ...(opts.leaseSeconds !== undefined ? { leaseSeconds: opts.leaseSeconds } : {}),
      ...(opts.died ? { died: opts.died } : {}),
    };
  }

  /** One poll: the messages taken, each already running; their promises settle as the host settles them. */
  async poll(): Promise<Array<Promise<Delivery<T>>>> {
    const got = await this.queue.receiveMessages({
      numberOfMessages: this.options.batchSize,
      visibilityTimeout: this.#rules.leaseSeconds ?? 600,
    });
    return got.receivedMessageItems.map((m) => this.#deliver(m));
  }

  /** One poll, waited out. */
  async pollOnce(): Promise<Array<Delivery<T>>> {
    return Promise.all(await this.poll());
  }

  /** Polls until a poll finds nothing visible; every delivery in order of completion. */
  async drain(maxRounds = 50): Promise<Array<Delivery<T>>> {
    const out: Array<Delivery<T>> = [];
    for (let round = 0; round < maxRounds; round++) {
      const got = await this.pollOnce();
      if (got.length === 0) return out;
      out.push(...got);
    }
    throw new Error(`queue not drained after ${maxRounds} polls`);
  }

  async #deliver(m: RawMessage): Promise<Delivery<T>> {
    let outcome: { value: T } | undefined;
    const settled = await settleQueueMessage(m, this.#rules, async (body) => {
      outcome = {
        value: await this.handle(triggerValue(body), {
          id: m.messageId,
          dequeueCount: m.dequeueCount,
          insertionTime: m.insertedOn.toISOString(),
        }),
      };
    });
    return outcome ? { settled, outcome: outcome.value } : { settled };
  }
}

/** The answers of the deliveries that ran to the end. */
export const outcomesOf = <T>(ds: Array<Delivery<T>>): T[] =>
  ds.flatMap((d) => (d.outcome !== undefined ? [d.outcome] : []));
