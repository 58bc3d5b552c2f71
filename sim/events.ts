// What an ARM system topic (Microsoft.Resources.Subscriptions) publishes in the Event Grid schema, following the
// examples on learn.microsoft.com/azure/event-grid/event-schema-subscriptions. The event says *that* a resource was
// written; it carries no state and no ETag.
import { randomUUID } from "node:crypto";

export type ArmEventType =
  | "Microsoft.Resources.ResourceWriteSuccess"
  | "Microsoft.Resources.ResourceWriteFailure"
  | "Microsoft.Resources.ResourceDeleteSuccess"
  | "Microsoft.Resources.ResourceDeleteFailure"
  | "Microsoft.Resources.ResourceActionSuccess"
  | "Microsoft.Resources.ResourceActionFailure";

export interface ArmEventData {
  authorization: { scope: string; action: string; evidence: Record<string, string> };
  claims: Record<string, string>;
  correlationId: string;
  httpRequest: { clientRequestId: string; clientIpAddress: string; method: string; url: string };
  resourceProvider: string;
  resourceUri: string;
  operationName: string;
  status: "Succeeded" | "Failed";
  subscriptionId: string;
  tenantId: string;
}

/** Event Grid schema, as delivered on the wire (eventTime is an ISO string). */
export interface EventGridEvent {
  id: string;
  topic: string;
  subject: string;
  eventType: ArmEventType;
  eventTime: string;
  data: ArmEventData;
  dataVersion: string;
  metadataVersion: string;
}

/** Who wrote, as ARM saw the request. */
export interface Writer {
  clientRequestId: string;
  correlationId: string;
  claims: Record<string, string>;
  method: string;
  url: string;
  clientIpAddress: string;
}

export interface EventInput {
  eventType: ArmEventType;
  /** Resource ID as it appeared in the request (ARM IDs in events may differ in case from GET answers). */
  resourceUri: string;
  subscriptionId: string;
  tenantId: string;
  operationName: string;
  writer: Writer;
  time: string;
}

export function armEvent(input: EventInput): EventGridEvent {
  const failed = input.eventType.endsWith("Failure");
  return {
    id: randomUUID(),
    topic: `/subscriptions/${input.subscriptionId}`,
    subject: input.resourceUri,
    eventType: input.eventType,
    eventTime: input.time,
    data: {
      authorization: { scope: input.resourceUri, action: input.operationName, evidence: { role: "Contributor" } },
      claims: input.writer.claims,
      correlationId: input.writer.correlationId,
      httpRequest: {
        clientRequestId: input.writer.clientRequestId,
        clientIpAddress: input.writer.clientIpAddress,
        method: input.writer.method,
        url: input.writer.url,
      },
      resourceProvider: input.operationName.split("/")[0] ?? "Microsoft.Compute",
      resourceUri: input.resourceUri,
      operationName: input.operationName,
      status: failed ? "Failed" : "Succeeded",
      subscriptionId: input.subscriptionId,
      tenantId: input.tenantId,
    },
    dataVersion: "2",
    metadataVersion: "1",
  };
}

/** Claims from a bearer token: the JWT payload's claims as strings, or the given defaults for an opaque token. */
export function claimsFromToken(token: string | undefined, defaults: Record<string, string>): Record<string, string> {
  const payload = token?.split(".")[1];
  if (payload) {
    try {
      const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as unknown;
      if (typeof parsed === "object" && parsed !== null) {
        return Object.fromEntries(
          Object.entries(parsed).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
        );
      }
    } catch {
      // not a JWT: fall through to the defaults
    }
  }
  return { ...defaults };
}
