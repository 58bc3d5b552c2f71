import type { ControlState, WindowClaim, WriteInDoubt } from "./control";
import type { Declaration, StoredDeclaration } from "./declarations";
import type { DriftStore, LastWriters } from "./drift";
import type { HistoryEntry } from "./history";
import type { DeclarationStore, ModelCache, UpsertResult } from "./ports";
import type { EventCaller } from "./eventCaller";
import type { NicRef, TargetRef, VmRef } from "./resourceIds";

/**
 * The port a reconcile pass works through (real one: azure/targets). A pass takes its target's lease with one read of
 * the target's partition and one conditional write of its control row; reads everything it needs from that read; and
 * gathers its writes (outcomes, cache rows, history, drifts) to commit them with the lease's release, fenced by the
 * control row's ETag: a pass that lost its lease writes nothing.
 */

export interface OpenPass {
  /** The control row as the pass took it (lease ours, declare window closed when asked). */
  readonly control: ControlState;
  /** The target's declarations and cache rows as read under the lease; stores and outcomes go into the commit. */
  readonly declarations: DeclarationStore;
  readonly cache: ModelCache;
  /** A declaration's last drift (committed with the pass); the last foreign writer of a resource (read at once). */
  readonly drifts: DriftStore;
  readonly writers: Pick<LastWriters, "read">;
  /** A history entry, committed with the pass. */
  recordHistory(entry: HistoryEntry): void;
  /** A write whose answer never came, kept in the control row with the pass's commit. */
  recordDoubt(doubt: WriteInDoubt): void;
  /** Pushes the lease's expiry on; false when it is no longer ours. */
  renew(ttlMs: number): Promise<boolean>;
  /**
   * Commits the pass's writes with the control row as `change` makes it ("abort": write nothing, the lease is no
   * longer ours). Answers the control row as written, or undefined when aborted.
   */
  commit(change: (s: ControlState) => ControlState | "abort"): Promise<ControlState | undefined>;
  /** The next pass under the same lease (kept by the last commit): a new read of the partition. */
  reopen(): Promise<OpenPass>;
}

export type PassTake =
  | { kind: "acquired"; pass: OpenPass; handover?: string }
  /** Another holder runs: another pass is now asked of it. `firstToAsk`: nobody had asked since its pass began. */
  | { kind: "held"; firstToAsk: boolean; expiresAt: number };

export interface TargetPasses {
  /** `close`: close the declare window in the same write (a pass about to read every declaration). */
  acquire(ref: TargetRef, holder: string, ttlMs: number, fresh: boolean, close: boolean): Promise<PassTake>;
  /** Lets go at once (a pass that threw); nothing else is written. */
  releaseNow(ref: TargetRef, holder: string, handover?: string): Promise<void>;
  /** The control row alone (the stand-down check of a leading pass). */
  readControl(ref: TargetRef): Promise<ControlState>;
}

/** A cache row of a target an ARM event is about. */
export type EventRow =
  | { kind: "model" }
  | { kind: "instance"; instanceId: string }
  | { kind: "nic"; ref: NicRef }
  | { kind: "vm"; ref: VmRef };

/** What an event found of its target, and whether it claimed the target's one event pass of the debounce window. */
export interface EventNoted {
  /** Some row it named was cached. */
  held: boolean;
  /** The target has declarations. */
  declared: boolean;
  claimed: boolean;
  /** The claim kept losing races: the pass is asked for anyway (one too many costs a few reads, none loses a repair). */
  contended?: boolean;
}

/**
 * The port ARM events work through (real one: azure/targets): one read of the target's control row and the named
 * rows, one transaction that marks them stale (or drops them), keeps the writer, and claims the debounce.
 */
export interface TargetEvents {
  /** Someone else wrote these rows' resources. Marks them stale (every named row, when the target is declared). */
  invalidate(
    target: TargetRef,
    rows: readonly EventRow[],
    writer: { resourceId: string; caller: EventCaller } | undefined,
    reason: string,
    debounceMs: number,
  ): Promise<EventNoted>;
  /** These rows' resources (or, with "all", the target) were deleted: their rows go, the debounce is claimed. */
  forget(target: TargetRef, rows: readonly EventRow[] | "all", debounceMs: number): Promise<EventNoted>;
  /** The target whose partition caches this NIC or VM, if any. */
  ownerOf(resource: NicRef | VmRef): Promise<TargetRef | undefined>;
}

/** One declaration to store, with who claims the declare window for it (the same on a redelivery). */
export interface Declared {
  declaration: Declaration;
  claimant: string;
}

export type DeclaredResult =
  | { result: UpsertResult; stored: StoredDeclaration }
  /** Over a cap: nothing stored. */
  | { result: "refused"; cap: string; reason: string };

/** How a batch's declarations are to be gathered into passes (see reconcile/declareWindow.ts). */
export interface WindowRequest {
  windowMs: number;
  joinableMs: number;
  quietMs: number;
}

export interface DeclareOutcome {
  results: DeclaredResult[];
  /** The declare window's answer for the batch; undefined when nothing was stored nor redelivered. */
  claim: WindowClaim | undefined;
}

/**
 * The port declarations come in through (real one: azure/targets/declareTarget.ts): a batch of one target's
 * declarations stored in one transaction with the target's control row (counts, caps, the declare window).
 */
export interface TargetIntake {
  declareBatch(ref: TargetRef, batch: readonly Declared[], window: WindowRequest | undefined): Promise<DeclareOutcome>;
}
