import type { QueueClient } from "@azure/storage-queue";
import { targetField, type DeclareMessage, type ReconcileMessage } from "../core/messages";
import type { Logger, ReconcileRequest, WorkQueue } from "../core/ports";

/** Storage Queue's longest visibility timeout: 7 days. */
const MAX_VISIBILITY_SECONDS = 7 * 24 * 3600;

/**
 * host.json sets messageEncoding base64, as the Functions host expects by default; every message we put is
 * encoded so, or the trigger could not read it.
 */
export function encodeMessage(message: unknown): string {
  return Buffer.from(JSON.stringify(message), "utf8").toString("base64");
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

  async enqueueReconcile(targetId: string, reason: string, opts: ReconcileRequest = {}): Promise<void> {
    const message: ReconcileMessage = {
      v: 1,
      kind: "reconcile",
      ...targetField(targetId),
      reason: reason.slice(0, 256),
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
    const sent = await this.queue.sendMessage(encodeMessage(message), visibilityTimeout > 0 ? { visibilityTimeout } : {});
    const m = message as { kind?: string; scaleSetId?: string; targetId?: string; reason?: string; attempt?: number };
    this.log?.info("enqueue", { kind: m.kind, scaleSetId: m.scaleSetId ?? m.targetId, reason: m.reason, attempt: m.attempt, visibilityTimeoutSeconds: visibilityTimeout, nextVisibleOn: sent.nextVisibleOn?.toISOString(), messageId: sent.messageId });
  }

  /** A message that can never succeed goes here at once, with the reason next to what was received. */
  async sendToPoison(received: unknown, reason: string): Promise<void> {
    const text = typeof received === "string" ? received : JSON.stringify(received);
    await this.poison.sendMessage(encodeMessage({ reason, received: text.slice(0, 32 * 1024), at: new Date().toISOString() }));
  }
}
