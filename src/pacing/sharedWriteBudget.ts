import { refill, waitForToken, WRITE_BUDGETS, type BucketSpec, type BucketState } from "../core/tokenBucket";
import type { InstanceRef, NicRef, ScaleSetRef } from "../core/resourceIds";

/**
 * The subscription-wide write budgets (ARM's write bucket, CRP's per-subscription scale set and instance buckets) as
 * every host shares them: one row in storage per subscription, from which a host reserves a batch of tokens with a
 * conditional write before it spends them. Two hosts therefore never spend the same token, where the write pacer alone
 * learns another host's spending only from the next answer's headers (two hosts starting together both spend the last
 * tokens). What ARM's answers say remains still corrects the row: a reservation never plans on more than the host's
 * pacer learnt from them (`known`), and writes that lower figure back for every host.
 *
 * A reservation lives `holdMs`; what its host has not spent by then is lost to it. The row lists every live
 * reservation (host → tokens, until), and a bucket is never counted fuller than its size less those: a host may still
 * spend a reservation made when the bucket was full, after the bucket refilled, so the row keeps room for it. A host
 * that dies holding a reservation loses it when it lapses (`holdMs`, 10 s), and the room comes back then.
 */

export type SharedBudgetKind = "arm" | "vmss-sub" | "vm-sub";
export const SHARED_BUDGET_KINDS: readonly SharedBudgetKind[] = ["arm", "vmss-sub", "vm-sub"];

export type KindCounts = Partial<Record<SharedBudgetKind, number>>;

/** One host's live reservation as the row lists it. */
export interface SharedGrant {
  until: number;
  tokens: KindCounts;
}

/** A subscription's shared buckets as stored, with the row's ETag for the conditional write. */
export interface SharedBudgetRow {
  buckets: Partial<Record<SharedBudgetKind, BucketState>>;
  /** Live reservations by host. */
  grants: Record<string, SharedGrant>;
  etag: string | undefined;
}

/** The storage the hosts share (azure/sharedBudgetTable). */
export interface SharedBudgetStore {
  read(subscriptionId: string): Promise<SharedBudgetRow>;
  /** Conditional on `row.etag` (creates the row when undefined); false when another host wrote it first. */
  write(subscriptionId: string, row: Omit<SharedBudgetRow, "etag">, etag: string | undefined): Promise<string | false>;
}

export const SHARED_BUDGET_SPECS: Record<SharedBudgetKind, BucketSpec> = {
  arm: WRITE_BUDGETS.armWrites,
  "vmss-sub": WRITE_BUDGETS.subscriptionScaleSetUpdates,
  "vm-sub": WRITE_BUDGETS.subscriptionInstanceUpdates,
};

/** The shared buckets one write spends: ARM's, and CRP's subscription bucket of its kind (NICs: ARM's only). */
export function sharedKindsOf(target: ScaleSetRef | InstanceRef | NicRef): {
  subscriptionId: string;
  kinds: SharedBudgetKind[];
} {
  if (target.kind === "nic") return { subscriptionId: target.subscriptionId.toLowerCase(), kinds: ["arm"] };
  if (target.kind === "instance")
    return { subscriptionId: target.scaleSet.subscriptionId.toLowerCase(), kinds: ["arm", "vm-sub"] };
  return { subscriptionId: target.subscriptionId.toLowerCase(), kinds: ["arm", "vmss-sub"] };
}

/**
 * What a reservation asks for beside the kinds the waiting write needs: a scale set's model write is followed by its
 * instances' writes, so it tops up the instance bucket too, and one round trip serves the whole pass.
 */
function topUpKinds(needed: SharedBudgetKind[]): SharedBudgetKind[] {
  return needed.includes("vmss-sub") ? [...needed, "vm-sub"] : needed;
}

export interface SharedBudgetOptions {
  /** Tokens of each kind a host holds after a reservation (fewer when fewer are left). */
  batch?: number;
  /** How long a reservation may be spent from. */
  holdMs?: number;
  /** Conditional writes lost in a row before this attempt gives up (the caller waits briefly and asks again). */
  maxRounds?: number;
}

interface Held {
  tokens: Record<SharedBudgetKind, number>;
  until: number;
}

/** A reservation's answer: 0 when the host now holds what the write needs, else how long until the row has it. */
type Reserved = number;

const noTokens = (): Record<SharedBudgetKind, number> => ({ arm: 0, "vmss-sub": 0, "vm-sub": 0 });

/** The longest a reservation waits for the bucket to hold as many tokens as the writes waiting for them. */
const BATCH_WAIT_MS = 2_000;

/** Milliseconds until the bucket holds `n` tokens (0 = now). */
export function waitForTokens(spec: BucketSpec, state: BucketState, now: number, n: number): number {
  if (state.at > now) return state.at - now + waitForTokens(spec, state, state.at, n);
  const s = refill(spec, state, now);
  if (s.tokens >= n) return 0;
  return s.at + Math.ceil((n - s.tokens) / spec.refillAmount) * spec.refillIntervalMs - now;
}

/** The row's bucket as this host may plan on it: refilled to now, at most its size less the others' live grants. */
export function plannable(
  spec: BucketSpec,
  stored: BucketState | undefined,
  othersHeld: number,
  now: number,
  learnt?: number,
): BucketState {
  let state = refill(spec, stored ?? { tokens: spec.capacity, at: now }, now);
  // What ARM answered (learnt by this host's pacer) wins when it is lower: every host then plans on it.
  if (learnt !== undefined && state.at <= now && learnt < state.tokens)
    state = { tokens: Math.max(-spec.capacity, learnt), at: state.at };
  const room = spec.capacity - othersHeld;
  return state.tokens > room ? { tokens: room, at: state.at } : state;
}

export class SharedWriteBudget {
  private readonly held = new Map<string, Held>();
  /** The last row read or written, per subscription: a reservation tries it first, so one uncontended round trip. */
  private readonly lastRow = new Map<string, SharedBudgetRow>();
  private readonly inFlight = new Map<string, Promise<Reserved>>();
  /** Writes of this process in `take` per subscription, waiting or about to spend. */
  private readonly waiting = new Map<string, number>();
  private readonly batch: number;
  private readonly holdMs: number;
  private readonly maxRounds: number;
  /** Table round trips made (reads, reservations and lost races), for tests and the benchmark's accounting. */
  roundTrips = 0;
  private slowestRoundTripMs = 0;

  constructor(
    private readonly store: SharedBudgetStore,
    private readonly now: () => number,
    /** This host's name in the row's grants (unique per process). */
    readonly hostId: string,
    /** What this host's pacer knows is left of a shared bucket (lowered by ARM's answers), if it knows. */
    private readonly known: (subscriptionId: string, kind: SharedBudgetKind) => number | undefined = () => undefined,
    opts: SharedBudgetOptions = {},
  ) {
    this.batch = opts.batch ?? 10;
    // Long enough that a host writing a change every few seconds reserves once per batch, not once per change (a
    // lapsed reservation is a Table write more); short enough that a dead host's is back within seconds. What it
    // holds is never spent on top of a refilled bucket (the row keeps room for it), so a longer hold costs no 429.
    this.holdMs = opts.holdMs ?? 10_000;
    this.maxRounds = opts.maxRounds ?? 5;
  }

  /**
   * Spends one reserved token of each shared bucket this write uses: 0 when spent, else how long to wait first. With
   * `sleep`, waits up to `maxWaitMs` itself (and is counted among the writes waiting, which sizes the next batch).
   */
  async take(
    target: ScaleSetRef | InstanceRef | NicRef,
    sleep?: (ms: number) => Promise<void>,
    maxWaitMs = Number.POSITIVE_INFINITY,
  ): Promise<number> {
    const { subscriptionId, kinds } = sharedKindsOf(target);
    this.waiting.set(subscriptionId, (this.waiting.get(subscriptionId) ?? 0) + 1);
    try {
      for (;;) {
        const h = this.held.get(subscriptionId);
        if (h && h.until > this.now() && kinds.every((k) => h.tokens[k] >= 1)) {
          for (const k of kinds) h.tokens[k] -= 1;
          return 0;
        }
        // One reservation per subscription at a time in this process: the writes waiting for it share it.
        let pending = this.inFlight.get(subscriptionId);
        if (!pending) {
          pending = this.reserve(subscriptionId, kinds).finally(() => this.inFlight.delete(subscriptionId));
          this.inFlight.set(subscriptionId, pending);
        }
        const wait = await pending;
        if (wait > 0) {
          if (!sleep || wait > maxWaitMs) return wait;
          await sleep(wait);
        }
      }
    } finally {
      this.waiting.set(subscriptionId, (this.waiting.get(subscriptionId) ?? 1) - 1);
    }
  }

  /** Counts a round trip and how long it took on this clock (the slowest of the recent ones, decaying). */
  private async timed<T>(call: () => Promise<T>): Promise<T> {
    this.roundTrips++;
    const started = this.now();
    try {
      return await call();
    } finally {
      this.slowestRoundTripMs = Math.max(this.now() - started, 0.9 * this.slowestRoundTripMs);
    }
  }

  /** Tokens this host holds of a subscription now (tests, the status of a host). */
  holding(subscriptionId: string): Record<SharedBudgetKind, number> {
    const h = this.held.get(subscriptionId.toLowerCase());
    return h && h.until > this.now() ? { ...h.tokens } : noTokens();
  }

  /**
   * One conditional write to the shared row tops this host's holding up to a batch of every kind the write needs
   * (its unspent tokens carried over, their lapse moved on); answers the wait when one of them has none left.
   */
  private async reserve(subscriptionId: string, needed: SharedBudgetKind[]): Promise<Reserved> {
    for (let round = 0; round < this.maxRounds; round++) {
      let row = this.lastRow.get(subscriptionId);
      if (!row) {
        row = await this.timed(() => this.store.read(subscriptionId));
      }
      const now = this.now();
      const mine = this.held.get(subscriptionId);
      const carried = mine && mine.until > now ? { ...mine.tokens } : noTokens();
      const grants: Record<string, SharedGrant> = {};
      const othersHeld = noTokens();
      for (const [host, g] of Object.entries(row.grants)) {
        if (host === this.hostId || g.until <= now) continue;
        grants[host] = g;
        for (const k of SHARED_BUDGET_KINDS) othersHeld[k] += g.tokens[k] ?? 0;
      }
      // Others can hold no more than a bucket holds: a row claiming more (planted, or a bug) would otherwise turn into
      // a deficit that takes hours to refill, when the grants themselves lapse within a hold.
      for (const k of SHARED_BUDGET_KINDS) othersHeld[k] = Math.min(othersHeld[k], SHARED_BUDGET_SPECS[k].capacity);
      const buckets = { ...row.buckets };
      const grant = noTokens();
      // As many as the writes waiting here (a batch at most): while the bucket is refilling, a reservation of the one
      // token there is a Table round trip per write, and two hosts racing for it lose most of theirs.
      const want = Math.max(1, Math.min(this.batch, this.waiting.get(subscriptionId) ?? 1));
      let wait = 0;
      for (const k of topUpKinds(needed)) {
        const spec = SHARED_BUDGET_SPECS[k];
        const state = plannable(spec, row.buckets[k], othersHeld[k], now, this.known(subscriptionId, k));
        buckets[k] = state;
        grant[k] = Math.max(0, Math.min(this.batch - carried[k], Math.floor(state.tokens)));
        if (!needed.includes(k)) continue;
        if (carried[k] + grant[k] < 1) wait = Math.max(wait, waitForToken(spec, state, now), 1);
        else if (carried[k] + grant[k] < want) {
          // Worth waiting for only when the bucket refills soon (ARM's: 10 a second); CRP's refill a minute's lump.
          const soon = waitForTokens(spec, state, now, want - carried[k]);
          if (soon <= BATCH_WAIT_MS) wait = Math.max(wait, soon);
        }
      }
      // Nothing to reserve for this write: no round trip (the next reservation writes the correction, if any).
      if (wait > 0) return wait;
      const tokens = noTokens();
      for (const k of SHARED_BUDGET_KINDS) {
        tokens[k] = carried[k] + grant[k];
        const s = buckets[k];
        if (s && grant[k] > 0) buckets[k] = { tokens: s.tokens - grant[k], at: s.at };
      }
      // A reservation must outlive the round trip that makes it, with time to spend it: on this clock a Table call
      // may take seconds (a host under load, or the benchmark's time-scaled clock, where 100 real ms are 15 s).
      const until = now + Math.max(this.holdMs, 4 * this.slowestRoundTripMs);
      grants[this.hostId] = { until, tokens: Object.fromEntries(SHARED_BUDGET_KINDS.map((k) => [k, tokens[k]])) };
      const etag = await this.timed(() => this.store.write(subscriptionId, { buckets, grants }, row.etag));
      if (etag !== false) {
        this.lastRow.set(subscriptionId, { buckets, grants, etag });
        // Spent meanwhile (the carried tokens were still spendable while the write was in flight) stays spent.
        const spentMeanwhile = noTokens();
        const during = this.held.get(subscriptionId);
        if (during && mine && during === mine)
          for (const k of SHARED_BUDGET_KINDS) spentMeanwhile[k] = carried[k] - during.tokens[k];
        for (const k of SHARED_BUDGET_KINDS) tokens[k] = Math.max(0, tokens[k] - Math.max(0, spentMeanwhile[k]));
        this.held.set(subscriptionId, { tokens, until });
        return 0;
      }
      // Another host reserved first: read what it left.
      this.lastRow.delete(subscriptionId);
    }
    return 50 + Math.floor(Math.random() * 100);
  }
}
