import type { FaultHandle, InterleaveHandle } from "../../sim";
import { seededRandom as prng } from "../../sim/random";

// One run's bookkeeping: the seeded choices, the counters and the step log, the faults tried, and what the
// producers and other writers did, which the invariants check the end state against.

export const FAULTS = [
  "412 storm (interleaved writer)",
  "429 with long Retry-After",
  "409 concurrent operation",
  "500 on a write",
  "503 on a read",
  "dropped connection",
  "slow answer past the client timeout, write happened",
  "operation ended Failed",
  "scale set deleted mid-run",
  "instance deleted",
  "scale out / in by another writer",
  "another writer's ip configuration",
  "another writer drops our pool (drift)",
  "Azurite stopped and restarted",
  "invocation killed mid-reconcile",
  "event duplicated",
  "event delayed past the next timer run",
  "event lost",
  "event reordered",
  "event URI odd casing / trailing slash / CloudEvents",
  "bad message (out of scope, malformed)",
  "Flexible: another writer's NIC write (tag, or drops our pool)",
  "Flexible: 412 storm on a NIC (interleaved stale NIC PUT)",
  "Flexible: scale out / in by another writer",
  "scale-in during a reconcile (writes to a leaving instance: 400 not active / 409 marked for deletion)",
  "scale-out reusing an instance ID (a reborn instance, another writer's ip configuration on it)",
  "ETag drift with no write (a new instance's ETag moves after its create)",
  "cross-instance conflict (another writer's scale-set operation during our instance writes)",
  "slow operations (scale set and instance writes take 30 s)",
] as const;
export type FaultName = (typeof FAULTS)[number];

export interface SoakOptions {
  seed: number;
  /** Real minutes of chaos before the quiesce (the run also stops at maxSteps). */
  minutes: number;
  maxSteps?: number;
  /** Simulated seconds per real second. */
  timeScale?: number;
  /** Function hosts polling the queue at once, each with its own memory (pacers, coalescer); a kill takes one. */
  hosts?: number;
  /** How ARM events reach the app: "eventGrid" (default) as Event Grid delivers them (local/stack/eventGridDelivery.ts:
   *  at least once, out of order, some twice, some hours late on its retry schedule, in simulated time), or "simple"
   *  (one delivery 1 to 21 s late, with the soak's own faults: a few duplicated or held past the timer). */
  eventDelivery?: "eventGrid" | "simple";
  log?: (line: string) => void;
}

export const OTHER_KINDS = ["ipconfig-model", "ipconfig-instance", "tag", "drop", "scale"] as const;
/**
 * The Flexible scale set's other writers: on its VMs' NICs (a tag, a dropped pool, a stale NIC PUT storm), its
 * capacity.
 */
export const FLEX_KINDS = ["tag", "drop", "scale", "storm"] as const;
export const SIM_FAULT_KINDS = [
  "412",
  "429",
  "409",
  "500",
  "503",
  "drop",
  "slow",
  "opfail",
  "instance-delete",
  "kill",
  "scale-in-mid",
  "reborn",
  "cross",
  "slow-ops",
  "ss-delete",
] as const;

/** What a declaration must end as: its newest accepted state. */
export interface Declared {
  state: "present" | "absent";
  requestId: string;
  declaredAt: string;
}

export class SoakRun {
  readonly rand: () => number;
  readonly startedAt = Date.now();
  readonly counters: Record<string, number> = {};
  readonly violations: string[] = [];
  /** The app's own error log lines (first 50). */
  readonly appErrors: string[] = [];
  /** What the PRNG chose, in order. */
  readonly plan: string[] = [];
  readonly tried = new Map<FaultName, number>();
  readonly fired = new Map<FaultName, number>();
  /** Scale set keys each try was aimed at ("*" = run-wide). */
  readonly faultTargets = new Map<FaultName, string[]>();
  readonly simHandles: Array<{ f: FaultName; h: FaultHandle; times: number }> = [];
  readonly interleaves: Array<{ h: InterleaveHandle; times: number; ss: string; tag: string }> = [];
  /** Stale NIC PUT storms on the Flexible scale set's NICs: the NICs (lower) each storm's tag was written on. */
  readonly nicInterleaves: Array<{ h: InterleaveHandle; tag: string; nics: Set<string> }> = [];

  // What the end state is checked against.
  /** `${ss}|${pool}` lowercased → the newest accepted declaration. */
  readonly latest = new Map<string, Declared>();
  /** Producer retries (storage down). */
  readonly unsent: unknown[] = [];
  /**
   * Resource id (lower; an instance's as `${id}|${vmId}`, its incarnation) → ip configuration names another writer
   * added.
   */
  readonly othersIpConfigs = new Map<string, Set<string>>();
  /** Scale set id (lower) → tag names another writer set. */
  readonly othersTags = new Map<string, Set<string>>();
  /** NIC id (lower) → tag names another writer set on it. */
  readonly othersNicTags = new Map<string, Set<string>>();
  readonly expectedCapacity = new Map<string, number | undefined>();
  readonly deleted = new Set<string>();
  readonly badSent: Array<{ requestId: string; reason: RegExp }> = [];
  /**
   * `${scale set}|${target}` lowercased → the app's last write attempts on it (`arm.write`), to explain a violation.
   */
  readonly writes = new Map<string, string[]>();

  /**
   * Per declaration (request id): what happened to it, in order — sent, each handler's delivery and its upsert,
   * poisoned.
   */
  readonly trace = new Map<string, string[]>();
  /** Queue message id → the request id it carries (to attach the app's `declaration` log line to its trace). */
  readonly requestOfMessage = new Map<string, string>();
  /**
   * Run once each when one of our hosts next writes an instance of that scale set (lower): chaos "during a reconcile".
   */
  readonly onInstanceWrite = new Map<string, Array<() => void>>();
  /** Chaos still under way beside the loop (retrying until the simulator takes it); the quiesce waits for it. */
  readonly background: Array<Promise<void>> = [];
  /** Real ms since start of each Azurite stop and start again. */
  readonly azuriteRestarts: Array<{ stopped: number; started?: number }> = [];

  constructor(readonly opts: SoakOptions) {
    this.rand = prng(opts.seed);
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)] as T;
  }

  chance(p: number): boolean {
    return this.rand() < p;
  }

  bump(k: string, n = 1): void {
    this.counters[k] = (this.counters[k] ?? 0) + n;
  }

  /** Real seconds since the start, for the trace. */
  at(): string {
    return `${((Date.now() - this.startedAt) / 1000).toFixed(2)}s`;
  }

  note(requestId: string, what: string): void {
    const list = this.trace.get(requestId) ?? [];
    list.push(`${this.at()} ${what}`);
    this.trace.set(requestId, list);
  }

  /** The hooks waiting for a write to an instance of `scaleSetId`, taken (each runs once). */
  takeInstanceWriteHooks(scaleSetId: string): Array<() => void> {
    const key = scaleSetId.toLowerCase();
    const hooks = this.onInstanceWrite.get(key) ?? [];
    this.onInstanceWrite.delete(key);
    return hooks;
  }

  tryFault(f: FaultName, target: string): void {
    this.tried.set(f, (this.tried.get(f) ?? 0) + 1);
    this.faultTargets.set(f, [...(this.faultTargets.get(f) ?? []), target.toLowerCase()]);
  }
}
