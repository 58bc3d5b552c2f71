import type { RpcTypedData } from "./coreTypes";

/**
 * Turning a raw Storage queue message into what the host gives the worker. Pure, so the rules are tested alone.
 */

/**
 * Strict base64, as .NET's Convert.FromBase64String accepts it (whitespace ignored, length a multiple of 4).
 * Buffer.from(..., "base64") never fails, so it cannot be the check: a plain-text message would decode to noise.
 */
export function decodeBase64Strict(text: string): Buffer | undefined {
  const compact = text.replace(/[\s]+/g, "");
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return undefined;
  return Buffer.from(compact, "base64");
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

export type DecodedBody = { ok: true; text: string | undefined; bytes: Buffer } | { ok: false; reason: string };

/**
 * The message body per `messageEncoding`; `text` is undefined when the bytes are not UTF-8 (the host then has no
 * QueueTrigger string).
 */
export function decodeMessageBody(messageText: string, encoding: "base64" | "none"): DecodedBody {
  if (encoding === "none") return { ok: true, text: messageText, bytes: Buffer.from(messageText, "utf8") };
  const bytes = decodeBase64Strict(messageText);
  if (!bytes)
    return {
      ok: false,
      reason: "the message is not valid base64 (host.json extensions.queues.messageEncoding is base64)",
    };
  try {
    return { ok: true, text: utf8.decode(bytes), bytes };
  } catch {
    return { ok: true, text: undefined, bytes };
  }
}

export function encodeMessageBody(text: string, encoding: "base64" | "none"): string {
  return encoding === "base64" ? Buffer.from(text, "utf8").toString("base64") : text;
}

/** The trigger input: a string (which the library JSON-parses when it is JSON), or bytes when it is not text. */
export function queueTriggerInput(body: { text: string | undefined; bytes: Buffer }): RpcTypedData {
  return body.text !== undefined ? { string: body.text } : { bytes: body.bytes };
}

export interface ReceivedMessage {
  messageId: string;
  popReceipt: string;
  dequeueCount: number;
  insertedOn: Date;
  expiresOn: Date;
  nextVisibleOn: Date;
}

/**
 * The queue trigger's binding data (QueueTriggerBinding.CreateBindingData): QueueTrigger, DequeueCount,
 * ExpirationTime, Id, InsertionTime, NextVisibleTime, PopReceipt; then, when the body is a JSON object, its
 * top-level properties, which win over the built-in names (case-insensitively, keeping the built-in key's spelling).
 * That last rule is the host's, surprising as it is (azure-functions-nodejs-library#459): a body with an `id`
 * replaces `triggerMetadata.id`. The library camel-cases the keys on the way in.
 */
export function queueBindingData(
  msg: ReceivedMessage,
  text: string | undefined,
  sys: Record<string, unknown>,
): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  if (text !== undefined) data.QueueTrigger = text;
  Object.assign(data, {
    DequeueCount: msg.dequeueCount,
    ExpirationTime: msg.expiresOn,
    Id: msg.messageId,
    InsertionTime: msg.insertedOn,
    NextVisibleTime: msg.nextVisibleOn,
    PopReceipt: msg.popReceipt,
  });
  if (text !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      for (const [key, value] of Object.entries(parsed)) {
        const existing = Object.keys(data).find((k) => k.toLowerCase() === key.toLowerCase());
        data[existing ?? key] = value;
      }
    }
  }
  data.sys = sys;
  return data;
}
