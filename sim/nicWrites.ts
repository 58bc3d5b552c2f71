// Writes to NIC resources, from the API (PUT, full replacement, If-Match on the weak ETag) and from the control API
// ("another writer"): a new ETag, a Network RP long-running operation, and the write event when it ends.
import { armError, badRequest, resourceNotFound } from "./errors";
import type { Writer } from "./events";
import { canonical, networkInterfaceId, NIC_TYPE } from "./ids";
import type { JsonObject } from "./json";
import {
  checkNicPrecondition,
  incomingNicBody,
  newWeakEtag,
  nextMacAddress,
  nicBodyError,
  nicIpConfigs,
  renderNic,
  type NicRecord,
} from "./nics";
import type { NrpAnnouncement, NrpOperationLocks } from "./nrpOperations";
import type { Operation, Operations } from "./operations";
import { referencedIds } from "./poolReferenceIds";
import { poolIdsOf, ipConfigurations } from "./scaleSets";
import { getPath } from "./json";
import type { SimState } from "./state";
import { randomUUID } from "node:crypto";

export const OP_NIC_WRITE = "Microsoft.Network/networkInterfaces/write";

export interface NicHost {
  readonly state: SimState;
  readonly operations: Operations;
  readonly nrpLocks: NrpOperationLocks;
  readonly settings: { operationDurationMs: number; nicWriteAsync: boolean; nrpRetryAfterSeconds: number };
  emit(kind: "Write", outcome: "Success" | "Failure", resourceUri: string, operationName: string, writer: Writer): void;
  syntheticWriter(resourceId: string, clientRequestId?: string): Writer;
  requireResourceGroup(sub: string, rg: string): { name: string; location: string };
  requireSubscription(sub: string): { id: string };
}

export interface NicWriteContext {
  writer: Writer;
  resourceUri: string;
  /** Where the answer points the client (its Azure-AsyncOperation), for another write's 409. */
  at?: NrpAnnouncement;
  ifMatch?: string;
  ifNoneMatch?: string;
}

export function findNic(host: NicHost, sub: string, rg: string, name: string): NicRecord | undefined {
  return host.state.nics.get(canonical(networkInterfaceId(sub, rg, name)));
}

export function requireNic(host: NicHost, sub: string, rg: string, name: string): NicRecord {
  host.requireResourceGroup(sub, rg);
  const nic = findNic(host, sub, rg, name);
  if (!nic) throw resourceNotFound(NIC_TYPE, name, rg);
  return nic;
}

/** PUT of a NIC: the body replaces the stored NIC whole (read-only fields aside). */
export function writeNic(host: NicHost, sub: string, rg: string, name: string, body: JsonObject, ctx: NicWriteContext) {
  const group = host.requireResourceGroup(sub, rg);
  const id = networkInterfaceId(host.requireSubscription(sub).id, group.name, name);
  let nic = findNic(host, sub, rg, name);
  if (ctx.ifNoneMatch !== undefined) {
    if (ctx.ifNoneMatch.trim() !== "*")
      throw badRequest("InvalidParameter", "If-None-Match only supports the value '*'.");
    if (nic) throw armError(412, "PreconditionFailed", "Precondition failed.");
  }
  checkNicPrecondition(nic, ctx.ifMatch, id);
  const incoming = incomingNicBody(body);
  host.nrpLocks.check(id, referencedParents(incoming), host.settings.nrpRetryAfterSeconds);
  const err = nicBodyError(host.state, nic?.id ?? id, incoming);
  if (err) throw err;
  const created = !nic;
  if (!nic) {
    const location = body["location"];
    if (typeof location !== "string")
      throw badRequest("LocationRequired", "The location property is required for this definition.");
    nic = {
      id,
      subscriptionId: sub,
      resourceGroup: group.name,
      name,
      location,
      body: {},
      etag: "",
      resourceGuid: randomUUID(),
      macAddress: nextMacAddress(),
      provisioningState: "Creating",
    };
    host.state.nics.set(canonical(id), nic);
  }
  const operation = commitNic(host, nic, incoming, ctx.writer, ctx.resourceUri, ctx.at);
  return { status: created ? 201 : 200, body: renderNic(nic), etag: nic.etag, operation, charge: 1 };
}

/** The load balancers, application gateways and virtual networks a NIC body's pools and subnets belong to: a write
 *  to one of them that runs makes NRP refuse the NIC write for a while. */
function referencedParents(body: JsonObject): string[] {
  const out: string[] = [];
  for (const { ipc } of ipConfigurations([{ name: "nic", properties: { ipConfigurations: nicIpConfigs(body) } }])) {
    for (const pool of poolIdsOf(ipc)) out.push(pool.replace(/\/backendAddressPools\/[^/]+$/i, ""));
    for (const pool of referencedIds(ipc, "applicationGatewayBackendAddressPools"))
      out.push(pool.replace(/\/backendAddressPools\/[^/]+$/i, ""));
    const subnet = getPath(ipc, "properties", "subnet", "id");
    if (typeof subnet === "string") out.push(subnet.replace(/\/subnets\/[^/]+$/i, ""));
  }
  return out;
}

/**
 * Stores the NIC and gives it a new ETag (NRP does on every write). As recorded, NRP ends the write with its answer
 * (Succeeded, no operation, the event at once); with `nicWriteAsync` it runs an operation instead (undefined: none).
 */
export function commitNic(
  host: NicHost,
  nic: NicRecord,
  body: JsonObject,
  writer: Writer,
  resourceUri: string,
  at?: NrpAnnouncement,
): Operation | undefined {
  nic.body = body;
  nic.etag = newWeakEtag();
  if (!host.settings.nicWriteAsync) {
    nic.provisioningState = "Succeeded";
    host.emit("Write", "Success", resourceUri, OP_NIC_WRITE, writer);
    return undefined;
  }
  nic.provisioningState = "Updating";
  const op = host.operations.start(
    {
      subscriptionId: nic.subscriptionId,
      location: nic.location,
      resourceId: nic.id,
      durationMs: host.settings.operationDurationMs,
    },
    (done) => {
      const ok = done.status === "Succeeded";
      nic.provisioningState = ok ? "Succeeded" : "Failed";
      host.emit("Write", ok ? "Success" : "Failure", resourceUri, OP_NIC_WRITE, writer);
    },
  );
  // One operation at a time on a NIC: another write meets it (409 AnotherOperationInProgress).
  host.nrpLocks.hold(nic.id, op, { name: "PutNetworkInterfaceOperation", ...(at ? { at } : {}) });
  return op;
}

/** Another writer: `mutate` edits the NIC as rendered, the result is PUT (without If-Match) as a whole. */
export function writeNicAs(
  host: NicHost,
  nic: NicRecord,
  mutate: (r: JsonObject) => void,
  clientRequestId?: string,
): JsonObject {
  const draft = renderNic(nic);
  mutate(draft);
  const body = incomingNicBody(draft);
  // Another writer meets NRP's rules as the app does: refused while a write to the NIC (or what it references) runs.
  host.nrpLocks.check(nic.id, referencedParents(body), host.settings.nrpRetryAfterSeconds);
  const err = nicBodyError(host.state, nic.id, body);
  if (err) throw new Error(`another writer's NIC write refused: ${JSON.stringify(err.body)}`);
  commitNic(host, nic, body, host.syntheticWriter(nic.id, clientRequestId), nic.id);
  return renderNic(nic);
}
