/**
 * What one observation of a declaration says (on a model, an instance, a VM's NICs): the state poolsync last saw,
 * how old it is, and whether it is known to be stale. Its own module, so the views of each kind share it.
 */

export type ObservedState = "present" | "absent" | "unknown";
export type SyncState = "in-sync" | "drift" | "unknown";

export interface Observation {
  state: ObservedState;
  /** Why it is unknown, or what else is worth knowing (the ip configuration does not exist, being deleted). */
  note?: string;
  etag?: string;
  readAt?: string;
  /** Marked stale (an event, a 412, a write in flight) or older than the cache TTL: may no longer hold. */
  stale: boolean;
  staleReason?: string;
}
