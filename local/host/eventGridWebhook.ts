import { randomUUID } from "node:crypto";
import type { InvocationInput } from "./invoke";
import { sysBindingData, toHostTriggerMetadata, toHostTypedData } from "./typedData";

/** The path the Event Grid extension listens on under the host (`func start` and Azure alike). */
export const EVENT_GRID_WEBHOOK_PATH = "/runtime/webhooks/eventgrid";

/** Event Grid's own limits on one delivery: at most 5,000 events, and at most 1 MB (its batch size is 1–1,024 KB). */
export const EVENT_GRID_MAX_BATCH_EVENTS = 5000;
export const EVENT_GRID_MAX_BATCH_BYTES = 1_048_576;

export interface EventGridTarget {
  bindingName: string;
  invoke: (input: InvocationInput) => Promise<unknown>;
}

export interface WebhookResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * The Event Grid extension's webhook (EventGridExtensionConfigProvider + HttpRequestProcessor), for single-dispatch
 * functions (the Node model's one event per invocation):
 * - `?functionName=` unknown or missing: 404 "cannot find function: 'NAME'" (checked before the header);
 * - `aeg-event-type: SubscriptionValidation`: 200 `{"validationResponse": code}`, the code from `[0].data` of an
 *   Event Grid schema array, or from the (possibly JSON-encoded) `data` of a CloudEvent object;
 * - `Notification`: the body is an array (Event Grid schema) or one object (CloudEvents 1.0); every event is
 *   invoked, in parallel, with the event as plain JSON; 500 with the first failure's message if any invocation
 *   failed (Event Grid then redelivers the whole batch), else 202;
 * - `Unsubscribe`: 202; any other or no header: 400.
 * A body that is not a JSON object or array is a 400 here (the extension throws, which the host reports as 500).
 * One difference on purpose: a notification above Event Grid's own limits (more than 5,000 events, or more than 1 MB)
 * is 413 here, before anything is invoked. Event Grid never sends one, so such a POST comes from someone else; the
 * host in Azure would invoke up to its 100 MiB body limit. Event Grid does not retry a 413.
 */
export async function handleEventGridWebhook(
  functionName: string | null,
  eventTypeHeader: string | undefined,
  body: string,
  targets: ReadonlyMap<string, EventGridTarget>,
): Promise<WebhookResponse> {
  const target = functionName ? targets.get(functionName) : undefined;
  if (!functionName || !target) {
    return {
      status: 404,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: `cannot find function: '${functionName ?? ""}'`,
    };
  }
  const kind = eventTypeHeader?.toLowerCase();
  if (kind !== "subscriptionvalidation" && kind !== "notification") {
    return { status: kind === "unsubscribe" ? 202 : 400 };
  }
  const bytes = Buffer.byteLength(body, "utf8");
  if (kind === "notification" && bytes > EVENT_GRID_MAX_BATCH_BYTES)
    return tooLarge(
      `The batch is ${bytes} bytes; Event Grid sends at most ${EVENT_GRID_MAX_BATCH_BYTES} bytes in one.`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return badRequest("The request content should be parseable into a JSON object or array.");
  }
  if (typeof parsed !== "object" || parsed === null) {
    return badRequest("The request content should be parseable into a JSON object or array.");
  }

  if (kind === "subscriptionvalidation") {
    const code = validationCode(parsed);
    if (code === undefined) return badRequest("The validation event has no data.validationCode.");
    return {
      status: 200,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ validationResponse: code }),
    };
  }

  const events: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  if (events.length > EVENT_GRID_MAX_BATCH_EVENTS)
    return tooLarge(
      `The batch holds ${events.length} events; Event Grid sends at most ${EVENT_GRID_MAX_BATCH_EVENTS} in one.`,
    );
  const results = await Promise.allSettled(
    events.map((event) => target.invoke(eventInvocation(functionName, target.bindingName, event))),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    const reason = failed.reason as { message?: unknown } | undefined;
    return {
      status: 500,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: String(reason?.message ?? failed.reason),
    };
  }
  return { status: 202 };
}

function tooLarge(message: string): WebhookResponse {
  return { status: 413, headers: { "content-type": "text/plain; charset=utf-8" }, body: message };
}

function badRequest(message: string): WebhookResponse {
  return { status: 400, headers: { "content-type": "text/plain; charset=utf-8" }, body: message };
}

function validationCode(parsed: object): string | undefined {
  let data: unknown = Array.isArray(parsed)
    ? (parsed[0] as { data?: unknown } | undefined)?.data
    : (parsed as { data?: unknown }).data;
  if (typeof data === "string") {
    // CloudEvents validation events carry `data` JSON-encoded: the extension parses it again.
    try {
      data = JSON.parse(data);
    } catch {
      return undefined;
    }
  }
  const code = (data as { validationCode?: unknown } | undefined)?.validationCode;
  return code === undefined || code === null ? undefined : String(code);
}

/**
 * One event's invocation: the event itself as JSON (what the extension hands a JObject-bound function), and as
 * trigger metadata its top-level properties plus the host's `sys` data.
 */
export function eventInvocation(functionName: string, bindingName: string, event: unknown): InvocationInput {
  const props = event && typeof event === "object" && !Array.isArray(event) ? (event as Record<string, unknown>) : {};
  return {
    inputData: [{ name: bindingName, data: toHostTypedData(event) }],
    triggerMetadata: toHostTriggerMetadata({ ...props, sys: sysBindingData(functionName, new Date(), randomUUID()) }),
  };
}
