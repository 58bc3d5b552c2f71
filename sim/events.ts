// What an ARM system topic (Microsoft.Resources.Subscriptions) publishes in the Event Grid schema, following the
// examples on learn.microsoft.com/azure/event-grid/event-schema-subscriptions. The event says *that* a resource was
// written; it carries no state and no ETag.
import { randomUUID } from "node:crypto";

export type ArmEventType =
  | "Microsoft.Resources.ResourceWriteSuccess"
  | "Microsoft.Resources.ResourceWriteFailure"
  | "Microsoft.Resources.ResourceWriteCancel"
  | "Microsoft.Resources.ResourceDeleteSuccess"
  | "Microsoft.Resources.ResourceDeleteFailure"
  | "Microsoft.Resources.ResourceDeleteCancel"
  | "Microsoft.Resources.ResourceActionSuccess"
  | "Microsoft.Resources.ResourceActionFailure"
  | "Microsoft.Resources.ResourceActionCancel";

export type EventSchema = "EventGridSchema" | "CloudEventSchemaV1_0";

/** How an operation ended, and the event type family it is published as. */
export type EventOutcome = "Success" | "Failure" | "Cancel";

export interface ArmEventData {
  authorization: { scope: string; action: string; evidence: Record<string, string> };
  claims: Record<string, string>;
  correlationId: string;
  /** Absent on a create: Azure's events for creates carry no httpRequest. */
  httpRequest?: { clientRequestId: string; clientIpAddress: string; method: string; url: string };
  resourceProvider: string;
  /** The resource group of a resource inside one. */
  resourceGroup?: string;
  resourceUri: string;
  operationName: string;
  status: "Succeeded" | "Failed" | "Canceled";
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
  /** The write created the resource. */
  created?: boolean;
}

/** CloudEvents 1.0, as Event Grid delivers ARM system events to a subscription that picked that schema. */
export interface CloudEvent {
  specversion: "1.0";
  id: string;
  source: string;
  subject: string;
  type: ArmEventType;
  time: string;
  datacontenttype: "application/json";
  data: ArmEventData;
}

export function toCloudEvent(e: EventGridEvent): CloudEvent {
  return {
    specversion: "1.0",
    id: e.id,
    source: e.topic,
    subject: e.subject,
    type: e.eventType,
    time: e.eventTime,
    datacontenttype: "application/json",
    data: e.data,
  };
}

export function armEvent(input: EventInput): EventGridEvent {
  const status = input.eventType.endsWith("Failure")
    ? "Failed"
    : input.eventType.endsWith("Cancel")
      ? "Canceled"
      : "Succeeded";
  const resourceGroup = /\/resourcegroups\/([^/]+)/i.exec(input.resourceUri)?.[1];
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
      ...(input.created
        ? {}
        : {
            httpRequest: {
              clientRequestId: input.writer.clientRequestId,
              clientIpAddress: input.writer.clientIpAddress,
              method: input.writer.method,
              url: input.writer.url,
            },
          }),
      resourceProvider: input.operationName.split("/")[0] ?? "Microsoft.Compute",
      ...(resourceGroup !== undefined ? { resourceGroup } : {}),
      resourceUri: input.resourceUri,
      operationName: input.operationName,
      status,
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
