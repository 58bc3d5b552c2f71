import type { ArmResourceEvent, NicOrVmEvent } from "../core/armEvents";
import type {
  CachedEntry,
  DeclarationStore,
  EventDebounce,
  Logger,
  ModelCache,
  UnheldEvents,
  WorkQueue,
} from "../core/ports";
import type { Scope } from "../core/scopes";
import type { LastWriters } from "../core/drift";

/** What every ARM event handler (scale sets and instances; NICs and VMs) needs, answers, and tests alike. */

export interface EventDeps {
  scopes: readonly Scope[];
  cache: ModelCache;
  debounce: EventDebounce;
  declarations: DeclarationStore;
  queue: WorkQueue;
  log: Logger;
  now: () => number;
  debounceMs: number;
  /** Where the last foreign writer of each resource is kept, for drift attribution. */
  writers?: LastWriters;
  /** Where events about resources poolsync holds nothing for are counted (they make no row of their own). */
  unheld?: UnheldEvents;
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

/** The event reports one of our own writes: its client request id is the one our row holds (written or in flight). */
export const isOwnWrite = (e: ArmResourceEvent | NicOrVmEvent, entry: CachedEntry<unknown> | undefined) =>
  e.clientRequestId !== undefined &&
  entry !== undefined &&
  (entry.ourClientRequestId === e.clientRequestId || entry.pendingClientRequestId === e.clientRequestId);
