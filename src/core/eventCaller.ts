/**
 * Who made the ARM call an event reports, as ARM's event says it (data.claims, data.authorization, data.correlationId).
 * Only ever shown to people: an event is unauthenticated input, so nothing here decides anything.
 */

export interface EventCaller {
  /** The caller's display name (a user's name, or a service principal's). */
  name: string | undefined;
  /** Entra object id. */
  id: string | undefined;
  appId: string | undefined;
  /** data.authorization.action (e.g. Microsoft.Compute/virtualMachineScaleSets/write). */
  operation: string | undefined;
  correlationId: string | undefined;
  eventId: string;
  /** The event's time (ARM's clock), when it said. */
  at: string | undefined;
}

const OBJECT_ID = "http://schemas.microsoft.com/identity/claims/objectidentifier";
const NAME_CLAIMS = ["name", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", "upn", "unique_name"];

const text = (v: unknown, max = 256): string | undefined =>
  typeof v === "string" && v !== "" ? v.slice(0, max) : undefined;
const record = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export function callerOf(data: Record<string, unknown>, eventId: string, at: string | undefined): EventCaller {
  const claims = record(data.claims);
  const authorization = record(data.authorization);
  return {
    name: NAME_CLAIMS.map((c) => text(claims[c])).find((v) => v !== undefined),
    id: text(claims[OBJECT_ID]) ?? text(claims.oid),
    appId: text(claims.appid) ?? text(claims.azp),
    operation: text(authorization.action) ?? text(data.operationName),
    correlationId: text(data.correlationId),
    eventId,
    at,
  };
}
