import { isSystemEvent, type KnownSystemEventTypes } from "@azure/eventgrid";
import { callerOf, type EventCaller } from "./eventCaller";
import {
  parseComputeId,
  parseNicId,
  parseVmId,
  type InstanceRef,
  type NicRef,
  type ScaleSetRef,
  type VmRef,
} from "./resourceIds";
import { ok, refuse, type Result } from "./result";

/**
 * ARM system events in either schema (Event Grid or CloudEvents 1.0), reduced to what invalidation needs.
 * An event is a hint that something was written, never the new state: nothing here trusts its contents
 * beyond naming a resource, and `httpRequest` is optional although the SDK's type says otherwise.
 */

const RESOURCE_EVENT_TYPES = [
  "Microsoft.Resources.ResourceWriteSuccess",
  "Microsoft.Resources.ResourceWriteFailure",
  "Microsoft.Resources.ResourceWriteCancel",
  "Microsoft.Resources.ResourceDeleteSuccess",
  "Microsoft.Resources.ResourceDeleteFailure",
  "Microsoft.Resources.ResourceDeleteCancel",
  "Microsoft.Resources.ResourceActionSuccess",
  "Microsoft.Resources.ResourceActionFailure",
  "Microsoft.Resources.ResourceActionCancel",
] as const satisfies readonly KnownSystemEventTypes[];

export type ResourceEventType = (typeof RESOURCE_EVENT_TYPES)[number];

export interface ArmResourceEvent {
  id: string;
  type: ResourceEventType;
  time: string | undefined;
  /** The scale set or instance the event is about (a child resource's event names its parent). */
  target: ScaleSetRef | InstanceRef;
  operationName: string;
  /** The caller's x-ms-client-request-id, when Event Grid carried it. */
  clientRequestId: string | undefined;
  correlationId: string | undefined;
  /** A delete of exactly this resource (not of a child, such as an extension). */
  isDeleteOfTarget: boolean;
  /** Who wrote: kept beside the row it invalidates, to attribute a drift it causes. */
  caller: EventCaller;
}

/** An event about a NIC or a top-level VM: where Flexible scale sets' and standalone VMs' membership lives. */
export interface NicOrVmEvent extends Omit<ArmResourceEvent, "target"> {
  target: NicRef | VmRef;
}

export type EventVerdict =
  | { kind: "act"; event: ArmResourceEvent }
  | { kind: "nic-or-vm"; event: NicOrVmEvent }
  | { kind: "ignore"; reason: string }
  | { kind: "malformed"; reason: string };

/** The NIC or VM a resource URI is about (a child, such as a NIC's ip configuration, names its parent). */
export function nicOrVmTargetOf(uri: string): Result<NicRef | VmRef> {
  const seg = uri.trim().replace(/\/+$/, "").split("/");
  const type = `${seg[6] ?? ""}/${seg[7] ?? ""}`.toLowerCase();
  if (seg.length < 9) return refuse("not a NIC or VM");
  const id = seg.slice(0, 9).join("/");
  if (type === "microsoft.network/networkinterfaces") return parseNicId(id);
  if (type === "microsoft.compute/virtualmachines") return parseVmId(id);
  return refuse("not a NIC or VM");
}

interface Envelope {
  id: string;
  type: string;
  subject: string | undefined;
  time: string | undefined;
  data: Record<string, unknown>;
  schema: "EventGrid" | "CloudEvents";
}

function envelopeOf(raw: unknown): Result<Envelope> {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return refuse("event is not JSON");
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return refuse("event is not a JSON object");
  const e = value as Record<string, unknown>;
  const cloud = typeof e.specversion === "string";
  const type = cloud ? e.type : e.eventType;
  if (typeof type !== "string" || type === "")
    return refuse(cloud ? "type: missing" : "eventType: missing (neither Event Grid nor CloudEvents schema)");
  if (typeof e.id !== "string" || e.id === "") return refuse("id: missing");
  const data = e.data;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return refuse("data: missing or not an object");
  return ok({
    id: e.id,
    type,
    subject: typeof e.subject === "string" ? e.subject : undefined,
    time: typeof (cloud ? e.time : e.eventTime) === "string" ? String(cloud ? e.time : e.eventTime) : undefined,
    data: data as Record<string, unknown>,
    schema: cloud ? "CloudEvents" : "EventGrid",
  });
}

/**
 * The scale set or instance a resource URI is about. ARM events name child resources too
 * (…/virtualMachineScaleSets/x/extensions/y, …/virtualMachines/0/networkInterfaces/n): those change their parent.
 */
export function computeTargetOf(uri: string): Result<ScaleSetRef | InstanceRef> {
  const trimmed = uri.trim().replace(/\/+$/, "");
  const seg = trimmed.split("/");
  // ["", "subscriptions", s, "resourceGroups", rg, "providers", "Microsoft.Compute", "virtualMachineScaleSets", name,
  // "virtualMachines", id, ...]
  if (
    seg.length < 9 ||
    (seg[6] ?? "").toLowerCase() !== "microsoft.compute" ||
    (seg[7] ?? "").toLowerCase() !== "virtualmachinescalesets"
  ) {
    return refuse("not a scale set or scale set VM");
  }
  const isInstance = seg.length >= 11 && (seg[9] ?? "").toLowerCase() === "virtualmachines";
  return parseComputeId(seg.slice(0, isInstance ? 11 : 9).join("/"));
}

function stringField(data: Record<string, unknown>, name: string): string | undefined {
  const v = data[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

export function classifyEvent(raw: unknown): EventVerdict {
  const env = envelopeOf(raw);
  if (!env.ok) return { kind: "malformed", reason: env.reason };
  const e = env.value;
  // The SDK's guards take either schema's shape; we hand it the one the event came in.
  const shaped =
    e.schema === "CloudEvents"
      ? { specversion: "1.0", type: e.type, source: "", id: e.id, time: e.time, data: e.data }
      : { eventType: e.type, id: e.id, subject: e.subject ?? "", eventTime: e.time, data: e.data, dataVersion: "" };
  const type = RESOURCE_EVENT_TYPES.find((t) => isSystemEvent(t, shaped as never));
  if (!type) return { kind: "ignore", reason: `event type ${e.type} is not an ARM resource event` };
  const uri = stringField(e.data, "resourceUri") ?? e.subject;
  if (!uri) return { kind: "malformed", reason: "data.resourceUri: missing (and no subject)" };
  const target = computeTargetOf(uri);
  const httpRequest = e.data.httpRequest;
  const clientRequestId =
    typeof httpRequest === "object" && httpRequest !== null
      ? stringField(httpRequest as Record<string, unknown>, "clientRequestId")
      : undefined;
  const depth = uri.trim().replace(/\/+$/, "").split("/").length;
  if (!target.ok) {
    const other = nicOrVmTargetOf(uri);
    if (!other.ok) return { kind: "ignore", reason: `${uri}: ${target.reason}` };
    const fields = {
      id: e.id,
      type,
      time: e.time,
      operationName: stringField(e.data, "operationName") ?? "",
      clientRequestId,
      correlationId: stringField(e.data, "correlationId"),
      caller: callerOf(e.data, e.id, e.time),
    };
    return {
      kind: "nic-or-vm",
      event: {
        ...fields,
        target: other.value,
        isDeleteOfTarget: type === "Microsoft.Resources.ResourceDeleteSuccess" && depth === 9,
      },
    };
  }
  return {
    kind: "act",
    event: {
      id: e.id,
      type,
      time: e.time,
      target: target.value,
      operationName: stringField(e.data, "operationName") ?? "",
      clientRequestId,
      correlationId: stringField(e.data, "correlationId"),
      caller: callerOf(e.data, e.id, e.time),
      isDeleteOfTarget:
        type === "Microsoft.Resources.ResourceDeleteSuccess" && depth === (target.value.kind === "instance" ? 11 : 9),
    },
  };
}
