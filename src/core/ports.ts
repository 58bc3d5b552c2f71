import type { Declaration, Outcome, StoredDeclaration } from "./declarations";
import type {
  BackendPoolModel,
  InstanceModel,
  NicModel,
  PoolAddress,
  ScaleSetInstanceNics,
  ScaleSetModel,
  VmModel,
} from "./models";
import type { NicConfiguration } from "./networkProfile";
import type { BackendPoolRef, InstanceRef, NicRef, ScaleSetRef, TargetRef, VmRef } from "./resourceIds";

/**
 * The narrow ports the reconcile depends on; real implementations live in src/azure/. Errors are the typed
 * ones of ./errors, never SDK errors.
 */

export interface WriteOptions {
  ifMatch: string;
  clientRequestId: string;
}

/** A resource group, the scope of a LIST. */
export interface ResourceGroupScope {
  subscriptionId: string;
  resourceGroup: string;
}

/** One page of a LIST: one ARM request. `nextLink` when more pages follow. */
export interface ScaleSetPage {
  models: ScaleSetModel[];
  nextLink: string | undefined;
}

export interface ComputePort {
  getScaleSet(ref: ScaleSetRef): Promise<ScaleSetModel>;
  /**
   * One page of the scale sets of a resource group, each a whole model with its ETag, as a GET answers it: the
   * first page without `nextLink`, the following ones with the link the previous page gave. One call, one request.
   */
  listScaleSetsPage(scope: ResourceGroupScope, nextLink?: string): Promise<ScaleSetPage>;
  /** Sends only location and the NIC configurations: never sku, capacity or any other field. */
  writeScaleSetNics(
    ref: ScaleSetRef,
    base: ScaleSetModel,
    nics: NicConfiguration[],
    opts: WriteOptions,
  ): Promise<ScaleSetModel>;
  listInstances(ref: ScaleSetRef): Promise<InstanceModel[]>;
  getInstance(ref: InstanceRef): Promise<InstanceModel>;
  writeInstanceNics(
    ref: InstanceRef,
    base: InstanceModel,
    nics: NicConfiguration[],
    opts: WriteOptions,
  ): Promise<InstanceModel>;
  getVm(ref: VmRef): Promise<VmModel>;
  /** The VMs of a resource group, as Azure lists them (a Flexible scale set's carry its ID). */
  listVms(scope: { subscriptionId: string; resourceGroup: string }): Promise<VmModel[]>;
}

/** The Network RP edge: NICs, read whole and written whole with If-Match. */
export interface NetworkPort {
  getNic(ref: NicRef): Promise<NicModel>;
  /** PUTs the NIC as read with these ip configurations: every other field goes back as it was read. */
  writeNic(
    ref: NicRef,
    base: NicModel,
    ipConfigurations: NicConfiguration["ipConfigurations"],
    opts: WriteOptions,
  ): Promise<NicModel>;
  /** A load balancer backend pool, with its load balancer's ETag (issue 43). */
  getBackendPool(ref: BackendPoolRef): Promise<BackendPoolModel>;
  /** PUTs the pool as read with these addresses, If-Match on its load balancer's ETag. */
  writeBackendPool(
    ref: BackendPoolRef,
    base: BackendPoolModel,
    addresses: PoolAddress[],
    opts: WriteOptions,
  ): Promise<BackendPoolModel>;
  /** Every instance's NICs of a Uniform scale set, with their private addresses (Network RP's scale set NIC list). */
  listScaleSetNics(ref: ScaleSetRef): Promise<ScaleSetInstanceNics[]>;
}

export type UpsertResult = "created" | "updated" | "unchanged" | "older";

export interface DeclarationStore {
  /**
   * Idempotent by request id; a declaration older than the stored one is ignored ("older"). `listed`: the target's
   * declarations as the caller just listed them (the cap check), so a re-declaration needs no read of its own.
   */
  upsert(
    target: TargetRef,
    d: Declaration,
    listed?: readonly StoredDeclaration[],
  ): Promise<{ result: UpsertResult; stored: StoredDeclaration }>;
  listForTarget(target: TargetRef): Promise<StoredDeclaration[]>;
  /** Conditional on the row ETag; false when a newer declaration replaced it meanwhile. */
  recordOutcome(target: TargetRef, d: StoredDeclaration, outcome: Outcome): Promise<boolean>;
  remove(target: TargetRef, d: StoredDeclaration): Promise<boolean>;
}

export interface CachedEntry<M> {
  model: M | undefined;
  readAt: number;
  stale: boolean;
  staleReason: string | undefined;
  ourClientRequestId: string | undefined;
  pendingClientRequestId: string | undefined;
  /** Table Storage ETag: a store conditional on it loses to any invalidation written after this read. */
  rowEtag: string;
  /**
   * An instance row: the scale set ETag that was read before this instance's state was (a LIST after the model
   * was known). While ARM still answers that ETag, no instance has changed since (every instance change moves it),
   * so the row may be refreshed without reading it. Undefined for any other store (our write's answer, a re-read).
   */
  listedUnder?: string;
}

export interface CachedPartition {
  scaleSet: CachedEntry<ScaleSetModel> | undefined;
  instances: Map<string, CachedEntry<InstanceModel>>;
}

/** A cache row the timer may refresh: stale, or read before the TTL cut-off. */
export interface RefreshCandidate {
  /** The scale set the row belongs to (as ARM answered its ID when known). */
  scaleSetId: string;
  /** undefined for the scale set's own row. */
  instanceId: string | undefined;
  stale: boolean;
  /** When it went stale, or when it was read: the timer visits oldest first. */
  since: number;
  touchedAt: number;
  rowEtag: string;
}

/** A cached scale set model's row, found by its resource group (no model: only what says whether it is due). */
export interface GroupRow {
  scaleSetKey: string;
  stale: boolean;
  /** When it went stale (0 when fresh). */
  staleAt: number;
  readAt: number;
  rowEtag: string;
  /**
   * A pass holds its lease, so one of our writes may be in flight: a LIST from before that write, stored over it,
   * would look fresher than the write's own answer. Only its own pass may refresh it.
   */
  writing: boolean;
}

/** What the timer remembers between runs. */
export interface TimerState {
  /**
   * Subscriptions (lower case) whose reads wait until a time: a 429's Retry-After, or a wait of the read pacer longer
   * than an invocation may sleep. Each subscription's buckets and windows are its own, so one pauses alone.
   */
  paused: Record<string, number>;
  /** Where the round over declared scale sets without cache rows stopped (a scale set key). */
  cursor: string;
  /** A resource group's LIST the read budget cut before its last page: the next LIST of that group starts here. */
  resume?: { group: string; nextLink: string };
  /** The last run's ARM requests by kind, for the status report. */
  lastRun?: { at: number; listPages: number; scaleSetGets: number; instanceLists: number; visited: number };
}

export interface TimerStateStore {
  read(): Promise<TimerState>;
  write(state: TimerState): Promise<void>;
}

/** A scale set's last reconcile that met a 412, a throttle or a failure: a record for people. */
export interface ReconcileProblem {
  /** Any target's ID; the stored row's field keeps the name it had before VMs were targets. */
  scaleSetId: string;
  at: string;
  result: string;
  preconditionFailures: number;
  throttles: number;
  reason: string;
  /** Instances whose own write ARM refused in that pass, each with ARM's reason. */
  instanceFailures?: { instanceId: string; reason: string }[];
}

export interface ProblemLog {
  record(ref: TargetRef, problem: ReconcileProblem): Promise<void>;
  /** The most recent first. */
  list(max?: number): Promise<ReconcileProblem[]>;
}

/** A store that keeps rows of its own per scale set: told to drop them when the scale set is gone. */
export interface ScaleSetRows {
  forget(ref: TargetRef): Promise<void>;
}

export interface ModelCache {
  readonly enabled: boolean;
  readPartition(target: TargetRef): Promise<CachedPartition>;
  /** Stores what ARM answered; `base` is the row ETag seen before the ARM call (undefined: the row did not exist). */
  storeScaleSet(
    ref: ScaleSetRef,
    model: ScaleSetModel,
    base: string | undefined,
    ourClientRequestId?: string,
  ): Promise<boolean>;
  /**
   * Stores a model read on another scale set's behalf (one LIST of their group): as storeScaleSet, except that the
   * row's idle age (touchedAt) is left as it was, so a neighbour's reads never keep an undeclared scale set cached.
   */
  refreshScaleSet(ref: ScaleSetRef, model: ScaleSetModel, base: string): Promise<boolean>;
  /** The scale set model rows of one resource group, by one range query over their partitions. */
  listGroupRows(scope: ResourceGroupScope): Promise<GroupRow[]>;
  /** `listedUnder`: see CachedEntry; every store without it clears it. */
  storeInstance(
    ref: InstanceRef,
    model: InstanceModel,
    base: string | undefined,
    ourClientRequestId?: string,
    listedUnder?: string,
  ): Promise<boolean>;
  /**
   * Unconditional: an invalidation always wins over a refresh that read ARM before it. Returns the row's new
   * Table ETag, the base for storing what a re-read after this invalidation finds (undefined when disabled).
   */
  markStale(ref: ScaleSetRef | InstanceRef | CachedResourceRef, reason: string): Promise<string | undefined>;
  /**
   * Marks the row stale before we write ARM, remembering the write's client request id: a crash mid-write leaves
   * the row stale, and the event of this very write is recognised as ours. Returns the base for storing its answer.
   */
  beginWrite(ref: ScaleSetRef | InstanceRef | CachedResourceRef, clientRequestId: string): Promise<string | undefined>;
  /** One row (scale set or instance) without its model's weight; undefined when absent or the cache is off. */
  readEntry(ref: ScaleSetRef | InstanceRef | CachedResourceRef): Promise<CachedEntry<unknown> | undefined>;
  /** Rows that are stale or were read before `readBefore`, from one filtered scan. */
  listRefreshCandidates(readBefore: number): Promise<RefreshCandidate[]>;
  /** Keys of the scale sets that have a cached model (fresh or not): one key-only scan. */
  listCachedScaleSets(): Promise<Set<string>>;
  /** Drops the scale set's cache rows, and asks every other store that keeps rows of it to drop theirs. */
  evictScaleSet(ref: TargetRef): Promise<void>;
  evictInstance(ref: InstanceRef): Promise<void>;
  /** A NIC's or a VM's own row (its own partition, so an event naming only the resource finds it). */
  storeResource(
    ref: CachedResourceRef,
    model: NicModel | VmModel,
    base: string | undefined,
    ourClientRequestId?: string,
  ): Promise<boolean>;
  evictResource(ref: CachedResourceRef): Promise<void>;
}

/** A VM as the reconcile last cached it, with its NICs' rows in the VM's order (`entry` undefined: never cached). */
export interface CachedVmNics {
  vm: CachedEntry<VmModel>;
  nics: { id: string; entry: CachedEntry<NicModel> | undefined }[];
}

/**
 * What the status views read of the NICs that hold a VM's or a Flexible scale set's memberships: only the rows the
 * reconcile cached, never ARM. A VM target's own VM; a scale set's VMs as cached by the reconcile of it (its resource
 * group's VM rows that name it), at most `max` of them.
 */
export interface VmNicRows {
  readVmNics(target: TargetRef, max: number): Promise<{ vms: CachedVmNics[]; truncated: boolean }>;
}

/** Resources cached in a row of their own: NICs, and VMs (whose row also says which target declared them). */
export type CachedResourceRef = NicRef | VmRef;

/**
 * Which declaration schedules the one gathered reconcile of a scale set, decided across instances with a
 * conditional Table write. "leading": the scale set was quiet (no window in the last `quietMs`), so this
 * declaration's reconcile runs at once and nothing joins it; "opened": this claimant opened a window (or opened it
 * earlier and is back, a redelivery) and must enqueue the reconcile at its end; "joined": a reconcile already
 * scheduled will read its declaration.
 */
export interface DeclareWindows {
  claim(
    ref: TargetRef,
    claimant: string,
    window: { windowMs: number; joinableMs: number; quietMs: number },
  ): Promise<"leading" | "opened" | "joined">;
  /** A window opened behind a leading claim whose reconcile is still to come (it will read every declaration). */
  windowPending(ref: TargetRef, windowMs: number): Promise<boolean>;
  /** A pass of the scale set is about to read its declarations: nothing joins the open window after this. */
  close(ref: TargetRef): Promise<void>;
}

/**
 * The scale set's event-reconcile window, claimed with a conditional Table write so that parallel deliveries of a
 * burst enqueue one reconcile, not one each. "contended": the claim kept losing races and gave up; the caller
 * enqueues anyway (one reconcile too many is cheap, none at all loses the repair).
 */
/** An ARM event about a resource poolsync holds nothing for (no declaration, no cache row). */
export interface UnheldEvent {
  at: string;
  resourceId: string;
  /** The event's id, type and operation, as stale rows give them. */
  reason: string;
}

/** A fixed-size tally of such events: they make no row of their own, yet show that delivery works. */
export interface UnheldEvents {
  record(e: UnheldEvent): Promise<void>;
  summary(): Promise<{ count: number; recent: UnheldEvent[] }>;
}

export interface EventDebounce {
  claim(ref: TargetRef, windowMs: number): Promise<"claimed" | "within-window" | "contended">;
}

/** A scale set's re-enqueued reconcile: which attempt comes next, and when its message becomes visible. */
export interface ReconcileAttempt {
  attempt: number;
  nextAttemptAt: number;
  reason: string;
}

export interface ReconcileAttempts {
  record(ref: TargetRef, attempt: ReconcileAttempt): Promise<void>;
  clear(ref: TargetRef): Promise<void>;
  /** By scale set key (the lower-case ID). */
  list(): Promise<Map<string, ReconcileAttempt>>;
}

/** What taking a scale set's reconcile lease found. */
export type LeaseTake =
  /** `handover`: what the previous holder left for the next (its view of the scale set's write budgets). */
  | { kind: "acquired"; handover?: string }
  /** Another holder runs: another pass is now asked of it. `firstToAsk`: nobody had asked since its pass began. */
  | { kind: "held"; firstToAsk: boolean; expiresAt: number };

/**
 * One reconcile of a scale set at a time across every host: a lease in storage with an expiry, so that a holder
 * that dies lets go by itself. A host that finds it held asks the holder for another pass instead of reconciling.
 * What is known in storage and nowhere else (the budgets no answer header reports before the next write) is handed
 * from one holder to the next with it.
 */
export interface ReconcileLeases {
  acquire(ref: TargetRef, holder: string, ttlMs: number, fresh: boolean): Promise<LeaseTake>;
  /** Pushes the expiry on while a long pass runs; false when the lease is no longer ours. */
  renew(ref: TargetRef, holder: string, ttlMs: number): Promise<boolean>;
  /**
   * Lets go, unless another pass was asked for meanwhile: then the lease is kept (renewed), the request cleared,
   * and the answer says to run once more (fresh when the asker wanted ARM read, not the cache).
   */
  release(
    ref: TargetRef,
    holder: string,
    ttlMs: number,
    handover?: string,
  ): Promise<{ again: false } | { again: true; fresh: boolean }>;
}

export interface ReconcileRequest {
  /** Invisible this long first (a Retry-After, a debounce window). */
  delayMs?: number;
  /** The n-th re-enqueued attempt of the same work. */
  attempt?: number;
  /** Read ARM, not the cache: someone just saw ARM differ from what the cache may still claim. */
  fresh?: boolean;
  /** A quiet target's first declaration (declare window on): it may stand down for a window opened behind it. */
  leading?: boolean;
}

export interface WorkQueue {
  enqueueReconcile(targetId: string, reason: string, opts?: ReconcileRequest): Promise<void>;
}

export interface Clock {
  now(): number;
  /** Resolves after `ms` of this clock's time, or at once (without error) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface Logger {
  info(event: string, fields: Record<string, unknown>): void;
  warn(event: string, fields: Record<string, unknown>): void;
  error(event: string, fields: Record<string, unknown>): void;
}
