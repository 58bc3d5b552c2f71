import type { QueueClient } from "@azure/storage-queue";
import {
  LEGACY_LEADING_PREFIX,
  reasonWithTrace,
  targetField,
  type DeclareMessage,
  type ReconcileMessage,
} from "../core/messages";
import type { Logger, ReconcileRequest, WorkQueue } from "../core/ports";
import { currentTraceparent } from "../telemetry/tracing";

/** Storage Queue's longest visibility timeout: 7 days. */
const MAX_VISIBILITY_SECONDS = 7 * 24 * 3600;

/**
 * host.json sets messageEncoding base64, as the Functions host expects by default; every message we put is
 * encoded so, or the trigger could not read it.
 */
export function encodeMessage(message: unknown): string {
  return Buffer.from(JSON.stringify(message), "utf8").toString("base64");
}

/** Storage Queue's limit on one message, as sent (the base64 text). */
export const MAX_QUEUE_MESSAGE_CHARS = 64 * 1024;

/**
 * The poison entry `{ reason, received, at }`, encoded, within the queue's 64 KiB: what was received is cut until the
 * envelope fits *after* JSON escaping (a control character becomes six characters) and base64 (4/3), so the reason is
 * never lost to a refused send. `receivedChars` then says how long it was.
 */
export function poisonEnvelope(received: string, reason: string, at: string): string {
  const why = reason.slice(0, 2048);
  let keep = Math.min(received.length, 32 * 1024);
  for (;;) {
    const cut = keep < received.length;
    const encoded = encodeMessage({
      reason: why,
      received: received.slice(0, keep),
      at,
      ...(cut ? { receivedChars: received.length } : {}),
    });
    if (encoded.length <= MAX_QUEUE_MESSAGE_CHARS || keep === 0) return encoded;
    keep = Math.floor(keep / 2);
  }
}

export class StorageWorkQueue implements WorkQueue {
  /**
   * `timeScale` > 1 only against a time-scaled simulator (benchmarks): delays are in the simulator's time,
   * the queue's visibility timeout in real seconds.
   */
  constructor(
    readonly queue: QueueClient,
    readonly poison: QueueClient,
    private readonly log?: Logger,
    private readonly timeScale = 1,
  ) {}

  get name(): string {
    return this.queue.name;
  }

  get poisonName(): string {
    return this.poison.name;
  }

  /** Approximate messages waiting (Storage's count); 0 for a queue not created yet. */
  depth(): Promise<number> {
    return depthOf(this.queue);
  }

  poisonDepth(): Promise<number> {
    return depthOf(this.poison);
  }

  /** Up to `max` (at most 32) poison messages, left in place. */
  async peekPoison(
    max: number,
  ): Promise<{ messageId: string; insertedOn: Date; dequeueCount: number; messageText: string }[]> {
    try {
      return (await this.poison.peekMessages({ numberOfMessages: max })).peekedMessageItems;
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return [];
      throw err;
    }
  }

  async enqueueReconcile(targetId: string, reason: string, opts: ReconcileRequest = {}): Promise<void> {
    const message: ReconcileMessage = {
      v: 1,
      kind: "reconcile",
      ...targetField(targetId),
      // The leading mark travels as the previous version's reason prefix until no host of that version is left
      // (its strict schema would poison a `leading` field): see LEGACY_LEADING_PREFIX. The trace context likewise
      // travels as a reason suffix (LEGACY_TRACE_MARK), so the reconcile continues the trace that asked for it.
      reason: reasonWithTrace(`${opts.leading ? LEGACY_LEADING_PREFIX : ""}${reason}`, currentTraceparent()),
      ...(opts.attempt ? { attempt: opts.attempt } : {}),
      ...(opts.fresh ? { fresh: true } : {}),
    };
    await this.send(message, opts.delayMs ?? 0);
  }

  async enqueueDeclare(message: DeclareMessage): Promise<void> {
    await this.send(message, 0);
  }

  private async send(message: unknown, delayMs: number): Promise<void> {
    const visibilityTimeout = Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(delayMs / this.timeScale / 1000)));
    const sent = await this.queue.sendMessage(
      encodeMessage(message),
      visibilityTimeout > 0 ? { visibilityTimeout } : {},
    );
    const m = message as {
      kind?: string;
      scaleSetId?: string;
      targetId?: string;
      reason?: string;
      attempt?: number;
      fresh?: boolean;
    };
    this.log?.info("enqueue", {
      kind: m.kind,
      scaleSetId: m.scaleSetId ?? m.targetId,
      reason: m.reason,
      attempt: m.attempt,
      fresh: m.fresh,
      visibilityTimeoutSeconds: visibilityTimeout,
      nextVisibleOn: sent.nextVisibleOn?.toISOString(),
      messageId: sent.messageId,
    });
  }

  /** A message that can never succeed goes here at once, with the reason next to what was received. */
  async sendToPoison(received: unknown, reason: string): Promise<void> {
    const text = typeof received === "string" ? received : JSON.stringify(received);
    await this.poison.sendMessage(poisonEnvelope(text, reason, new Date().toISOString()));
  }
}

async function depthOf(q: QueueClient): Promise<number> {
  try {
    return (await q.getProperties()).approximateMessagesCount ?? 0;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return 0;
    throw err;
  }
}
