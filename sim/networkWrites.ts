// What load balancer and application gateway writes share: the engine they run on, a write's context, NRP's
// preconditions and a long-running operation whose end publishes the write's event.
import { armError, badRequest, emptyIfMatch, locationChanged, locationRequired } from "./errors";
import type { EventOutcome, Writer } from "./events";
import { NEWEST_NETWORK_API_VERSION } from "./apiVersions";
import type { JsonObject } from "./json";
import { checkNicPrecondition } from "./nics";
import { UNANNOUNCED, type NrpOperationLocks } from "./nrpOperations";
import type { Operation, Operations } from "./operations";
import type { SimState } from "./state";

export interface NetworkHost {
  readonly state: SimState;
  readonly operations: Operations;
  readonly nrpLocks: NrpOperationLocks;
  readonly settings: {
    loadBalancerWriteMs: number;
    appGatewayWriteMs: number;
    supersedeRunningNetworkWrite: boolean;
    nrpRetryAfterSeconds: number;
  };
  emit(
    kind: "Write" | "Delete",
    outcome: EventOutcome,
    resourceUri: string,
    operationName: string,
    writer: Writer,
    created?: boolean,
  ): void;
  syntheticWriter(resourceId: string, clientRequestId?: string): Writer;
  requireResourceGroup(sub: string, rg: string): { name: string; location: string };
  requireSubscription(sub: string): { id: string };
}

export interface NetworkWriteContext {
  writer: Writer;
  /** The resource ID as the request spelled it (events carry it that way). */
  resourceUri: string;
  /** The request's api-version: which properties exist (adminState, its Drain). */
  apiVersion: string;
  /** scheme://host the client used: the base of the operation URL its answer gives (and another write's 409 names). */
  base: string;
  ifMatch?: string;
  ifNoneMatch?: string;
  /** The operation's duration instead of the setting's. 0: a write that came and went before anything else (the
   *  interleaved writer's): it meets a running operation as any write does, but its own ends at once, so it holds
   *  nothing another write would meet. */
  durationMs?: number;
}

export interface NetworkWriteOutcome {
  status: number;
  body?: JsonObject;
  operation: Operation;
  /** A delete also answers `Location` (NRP's `operationResults`). */
  withLocation?: boolean;
}

/** The api-version writes made through the control API are taken at. */
export const CONTROL_API_VERSION = NEWEST_NETWORK_API_VERSION;

/** A writer outside any request: the control API's other writer (a foreign tool, a person with curl). */
export function controlContext(
  host: NetworkHost,
  resourceId: string,
  opts: { clientRequestId?: string; ifMatch?: string; durationMs?: number } = {},
): NetworkWriteContext {
  return {
    writer: host.syntheticWriter(resourceId, opts.clientRequestId),
    resourceUri: resourceId,
    apiVersion: CONTROL_API_VERSION,
    base: UNANNOUNCED.base,
    ...(opts.ifMatch !== undefined ? { ifMatch: opts.ifMatch } : {}),
    ...(opts.durationMs !== undefined ? { durationMs: opts.durationMs } : {}),
  };
}

/** If-None-Match and If-Match as NRP applies them; `current` is the resource whose ETag the write meets. */
export function checkNrpPreconditions(
  current: { etag: string; id: string } | undefined,
  ctx: NetworkWriteContext,
  id: string,
): void {
  if (ctx.ifNoneMatch !== undefined) {
    if (ctx.ifNoneMatch.trim() !== "*")
      throw badRequest("InvalidParameter", "If-None-Match only supports the value '*'.");
    if (current) throw armError(412, "PreconditionFailed", "Precondition failed.");
  }
  if (ctx.ifMatch !== undefined && ctx.ifMatch.trim() === "") throw emptyIfMatch();
  checkNicPrecondition(current, ctx.ifMatch, id);
}

/** "East US 2" and "eastus2" name the same region. */
const normalLocation = (l: string): string => l.replace(/\s+/g, "").toLowerCase();

/** A create names its location; an update may not move the resource. */
export function checkLocation(
  given: unknown,
  existing: { location: string; name: string } | undefined,
  type: string,
  rg: string,
): void {
  if (!existing && typeof given !== "string") throw locationRequired();
  if (existing && typeof given === "string" && normalLocation(given) !== normalLocation(existing.location))
    throw locationChanged(type, existing.name, existing.location, given, rg);
}

export function outcomeOf(op: Operation): EventOutcome {
  return op.status === "Succeeded" ? "Success" : op.status === "Canceled" ? "Cancel" : "Failure";
}
