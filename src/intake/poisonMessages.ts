/** One message of the poison queue, decoded as far as it can be. */
export interface PoisonMessage {
  messageId: string;
  insertedOn: string;
  dequeueCount: number;
  /** Why it is here: poolsync's own reason, or the host's move after maxDequeueCount failed deliveries. */
  reason: string;
  /** What was received, as text (a JSON message as JSON text). */
  received: string;
  scaleSetId?: string;
}

/** Storage peeks at most 32 messages per call; that is all a status view needs. */
export const MAX_PEEK = 32;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Messages are base64 (host.json messageEncoding), but a hand-put one may be plain text: show whichever it is. */
export function decodeQueueText(text: string): string {
  if (text.length % 4 === 0 && BASE64.test(text)) {
    const bytes = Buffer.from(text, "base64");
    if (bytes.toString("base64") === text) {
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        // not UTF-8 underneath: it was plain text that happened to look like base64
      }
    }
  }
  return text;
}

function scaleSetIdOf(text: string): string | undefined {
  try {
    const v = JSON.parse(text) as { scaleSetId?: unknown };
    return typeof v?.scaleSetId === "string" ? v.scaleSetId : undefined;
  } catch {
    return undefined;
  }
}

export function describePoison(text: string): Pick<PoisonMessage, "reason" | "received" | "scaleSetId"> {
  const decoded = decodeQueueText(text);
  try {
    const v = JSON.parse(decoded) as { reason?: unknown; received?: unknown };
    // poolsync's own poison envelope (StorageWorkQueue.sendToPoison): { reason, received, at }
    if (
      v &&
      typeof v === "object" &&
      typeof v.reason === "string" &&
      typeof v.received === "string" &&
      !("kind" in v)
    ) {
      const scaleSetId = scaleSetIdOf(v.received);
      return { reason: v.reason, received: v.received, ...(scaleSetId ? { scaleSetId } : {}) };
    }
  } catch {
    // not JSON: the host moved it as it was
  }
  const scaleSetId = scaleSetIdOf(decoded);
  return {
    reason: "failed on every delivery (moved after maxDequeueCount)",
    received: decoded,
    ...(scaleSetId ? { scaleSetId } : {}),
  };
}

/** A message as peeked, undecoded. */
export interface PeekedMessage {
  messageId: string;
  insertedOn: Date;
  dequeueCount: number;
  messageText: string;
}

/** The work queue as the status report reads it (src/azure's StorageWorkQueue); a queue not created yet is empty. */
export interface QueueStatusSource {
  readonly name: string;
  readonly poisonName: string;
  depth(): Promise<number>;
  poisonDepth(): Promise<number>;
  peekPoison(max: number): Promise<PeekedMessage[]>;
}

export async function peekPoison(
  queue: Pick<QueueStatusSource, "peekPoison">,
  max = MAX_PEEK,
): Promise<PoisonMessage[]> {
  const got = await queue.peekPoison(Math.min(MAX_PEEK, Math.max(1, max)));
  return got.map((m) => ({
    messageId: m.messageId,
    insertedOn: m.insertedOn.toISOString(),
    dequeueCount: m.dequeueCount,
    ...describePoison(m.messageText),
  }));
}
