import type { ArmResourceEvent, NicOrVmEvent } from "../core/armEvents";
import type { Logger, UnheldEvents, WorkQueue } from "../core/ports";
import type { Scope } from "../core/scopes";
import type { TargetEvents } from "../core/targetPasses";
import type { ContendedWakes } from "./contendedWakes";

/** What every ARM event handler (scale sets and instances; NICs and VMs) needs, answers, and tests alike. */

export interface EventDeps {
  scopes: readonly Scope[];
  events: TargetEvents;
  queue: WorkQueue;
  log: Logger;
  now: () => number;
  debounceMs: number;
  /** Whether a client request id is one poolsync made for a write to this resource (azure/requestIds.ts). */
  ours(clientRequestId: string | undefined, resourceId: string): boolean;
  /** Where events about resources poolsync holds nothing for are counted (they make no row of their own). */
  unheld?: UnheldEvents;
  /** This host's wakes after a lost debounce claim: one per target per window. */
  contendedWakes?: ContendedWakes;
}

export type EventOutcome =
  | "malformed"
  | "ignored"
  | "out-of-scope"
  | "own-write"
  | "invalidated"
  /** About a resource poolsync holds nothing for: counted, no row made. */
  | "unheld"
  | "invalidated+reconcile"
  | "deleted"
  | "deleted+reconcile";

/** The reason an event gives the rows it marks stale and the reconcile it asks for. */
export const eventReason = (e: ArmResourceEvent | NicOrVmEvent) =>
  `event ${e.id} ${e.type.replace("Microsoft.Resources.", "")} ${e.operationName} at ${e.time ?? "?"}`;
