import { plannable as windowLimit } from "../core/armBudgets";
import { SlidingWindow } from "../core/slidingWindow";
import { refill, waitForToken, WRITE_BUDGETS, type BucketSpec, type BucketState } from "../core/tokenBucket";
import type { InstanceRef, NicRef, ScaleSetRef } from "../core/resourceIds";
import { WINDOW_SPECS, type WindowKind } from "./writePacer";

/**
 * The subscription-wide write budgets (ARM's write bucket, CRP's windows of model and instance writes, NRP's 5-minute
 * write budget) as every host shares them: one row in storage per subscription, from which a host reserves a batch of
 * tokens with a conditional write before it spends them. Two hosts therefore never spend the same token, where the
 * write pacer alone learns another host's spending only from the next answer's headers (two hosts starting together
 * both spend the last tokens), and NRP's answers say nothing at all. What the answers say still corrects the row: a
 * reservation never plans on more than the host's pacer learnt from them, and writes that back for every host.
 *
 * ARM's bucket is a token bucket in the row. The windows are sliding counts (core/slidingWindow.ts) in the row: a
 * reservation is counted in them as spent at its lapse, the latest moment it may be spent, so no fixed window of any
 * phase sees more than the window's size; what a host carries into its next reservation moves with it.
 *
 * A reservation lives `holdMs`; what its host has not spent by then is lost to it. For ARM's bucket the row lists every
 * live reservation (host → tokens, until), and the bucket is never counted fuller than its size less those: a host may
 * still spend a reservation made when the bucket was full, after the bucket refilled, so the row keeps room for it. A
 * host that dies holding a reservation loses it when it lapses (`holdMs`, 10 s), and the room comes back then (a
 * window's, once the window has passed).
 */
export type SharedBudgetKind = "arm" | WindowKind;
export const SHARED_BUDGET_KINDS: readonly SharedBudgetKind[] = ["arm", "vmss-sub", "vm-sub", "nrp"];
const WINDOW_KINDS: readonly WindowKind[] = ["vmss-sub", "vm-sub", "nrp"];

export type KindCounts = Partial<Record<SharedBudgetKind, number>>;

/** One host's live reservation as the row lists it. */
export interface SharedGrant {
  until: number;
  tokens: KindCounts;
}

/** A subscription's shared budgets as stored, with the row's ETag for the conditional write. */
export interface SharedBudgetRow {
  buckets: Partial<Record<"arm", BucketState>>;
  /** Sliding windows as slot counts (`[slot start, requests]`), by `kind|window` (`vm-sub|3Min`). */
  windows: Record<string, Array<[number, number]>>;
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

export const SHARED_BUCKET_SPECS: Record<"arm", BucketSpec> = { arm: WRITE_BUDGETS.armWrites };

/** The row's window names and sizes: `vm-sub|3Min` → 240 per 3 minutes, and so on. */
export const SHARED_WINDOWS: Array<{
  kind: WindowKind;
  key: string;
  suffix: string;
  spec: { size: number; windowMs: number };
}> = WINDOW_KINDS.flatMap((kind) =>
  Object.entries(WINDOW_SPECS[kind]).map(([suffix, spec]) => ({ kind, key: `${kind}|${suffix}`, suffix, spec })),
);

/** The shared budgets one write spends: ARM's, and the subscription window of its kind (CRP's or NRP's). */
export function sharedKindsOf(target: ScaleSetRef | InstanceRef | NicRef): {
  subscriptionId: string;
  kinds: SharedBudgetKind[];
} {
  if (target.kind === "nic") return { subscriptionId: target.subscriptionId.toLowerCase(), kinds: ["arm", "nrp"] };
  if (target.kind === "instance")
    return { subscriptionId: target.scaleSet.subscriptionId.toLowerCase(), kinds: ["arm", "vm-sub"] };
  return { subscriptionId: target.subscriptionId.toLowerCase(), kinds: ["arm", "vmss-sub"] };
}

/**
 * What a reservation asks for beside the kinds the waiting write needs: a scale set's model write is followed by its
 * instances' writes, so it tops up the instance window too, and one round trip serves the whole pass.
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

/** What a host's write pacer knows that the row may not: ARM's count left, its window counts, requests' lateness. */
export interface PacerKnowledge {
  armLeft(subscriptionId: string): number | undefined;
  counted(subscriptionId: string, kind: WindowKind, suffix: string): number | undefined;
  latenessMs(): number;
}

interface Held {
  tokens: Record<SharedBudgetKind, number>;
  until: number;
}

/** A reservation's answer: 0 when the host now holds what the write needs, else how long until the row has it. */
type Reserved = number;

const noTokens = (): Record<SharedBudgetKind, number> => ({ arm: 0, "vmss-sub": 0, "vm-sub": 0, nrp: 0 });

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
    /** What this host's pacer knows of the shared budgets (from ARM's and CRP's answers), if anything. */
    private readonly known: Partial<PacerKnowledge> = {},
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
   * Long: one conditional write of the shared row, and the read-modify-retry loop around it must keep the row's ETag,
   * the carried tokens and the lapse together.
   */
  private async reserve(subscriptionId: string, needed: SharedBudgetKind[]): Promise<Reserved> {
    for (let round = 0; round < this.maxRounds; round++) {
      let row = this.lastRow.get(subscriptionId);
      if (!row) {
        row = await this.timed(() => this.store.read(subscriptionId));
      }
      const now = this.now();
      const mine = this.held.get(subscriptionId);
      const alive = mine && mine.until > now ? mine : undefined;
      const carried = alive ? { ...alive.tokens } : noTokens();
      const grants: Record<string, SharedGrant> = {};
      let othersHeldArm = 0;
      for (const [host, g] of Object.entries(row.grants)) {
        if (host === this.hostId || g.until <= now) continue;
        grants[host] = g;
        othersHeldArm += g.tokens.arm ?? 0;
      }
      // Others can hold no more than a bucket holds: a row claiming more (planted, or a bug) would otherwise turn into
      // a deficit that takes hours to refill, when the grants themselves lapse within a hold.
      othersHeldArm = Math.min(othersHeldArm, SHARED_BUCKET_SPECS.arm.capacity);
      const grant = noTokens();
      // As many as the writes waiting here (a batch at most): while the bucket is refilling, a reservation of the one
      // token there is a Table round trip per write, and two hosts racing for it lose most of theirs.
      const want = Math.max(1, Math.min(this.batch, this.waiting.get(subscriptionId) ?? 1));
      let wait = 0;
      const kinds = topUpKinds(needed);
      // ARM's bucket.
      const buckets = { ...row.buckets };
      if (kinds.includes("arm")) {
        const spec = SHARED_BUCKET_SPECS.arm;
        const state = plannable(spec, row.buckets.arm, othersHeldArm, now, this.known.armLeft?.(subscriptionId));
        buckets.arm = state;
        grant.arm = Math.max(0, Math.min(this.batch - carried.arm, Math.floor(state.tokens)));
        if (carried.arm + grant.arm < 1) wait = Math.max(wait, waitForToken(spec, state, now), 1);
        else if (carried.arm + grant.arm < want) {
          // Worth waiting for only when the bucket refills soon (ARM's: 10 a second).
          const soon = waitForTokens(spec, state, now, want - carried.arm);
          if (soon <= BATCH_WAIT_MS) wait = Math.max(wait, soon);
        }
      }
      // The windows: what is counted in them, with this host's carried tokens taken out (they move to the new lapse)
      // and what this host's pacer learnt beyond the row's count added as spent now.
      const windows: Record<string, SlidingWindow> = {};
      for (const { kind, key, suffix, spec } of SHARED_WINDOWS) {
        const w = new SlidingWindow(spec);
        // A write goes out after its reservation and one Table round trip (its cache row marked), then takes its own
        // round trip to reach ARM.
        w.setLateness((this.known.latenessMs?.() ?? 0) + this.slowestRoundTripMs);
        w.load(row.windows[key] ?? [], now);
        // This host's last reservation, counted at its lapse: what it has not spent moves to the new lapse (carried)
        // or, once lapsed, was never spent at all (a lapsed reservation spends nothing): taken out of the count either
        // way. Left in, every reservation a pass did not use up counted as spent for a window, and a burst got about
        // half of each window (the hosts section's 1-host burst: 607 instance writes counted in the row's 30-minute
        // window for 298 sent).
        if (mine && mine.tokens[kind] > 0) w.remove(mine.until, mine.tokens[kind]);
        const learnt = this.known.counted?.(subscriptionId, kind, suffix);
        const counted = w.count(now);
        if (learnt !== undefined && learnt > counted) w.add(now, learnt - counted);
        windows[key] = w;
      }
      for (const kind of kinds) {
        if (kind === "arm") continue;
        const own = SHARED_WINDOWS.filter((x) => x.kind === kind);
        // The carried tokens were taken out of the count above but are counted again at the new lapse: they are part
        // of what the window must still hold, or every reservation that carries tokens overshoots by as many.
        const room = Math.min(...own.map((x) => windowLimit(x.spec) - windows[x.key]!.count(now))) - carried[kind];
        grant[kind] = Math.max(0, Math.min(this.batch - carried[kind], Math.floor(room)));
        if (!needed.includes(kind)) continue;
        if (carried[kind] + grant[kind] < 1)
          wait = Math.max(wait, ...own.map((x) => windows[x.key]!.waitMs(now, 1, windowLimit(x.spec))), 1);
      }
      // Nothing to reserve for this write: no round trip (the next reservation writes the correction, if any).
      if (wait > 0) return wait;
      const tokens = noTokens();
      for (const k of SHARED_BUDGET_KINDS) tokens[k] = carried[k] + grant[k];
      if (buckets.arm && grant.arm > 0) buckets.arm = { tokens: buckets.arm.tokens - grant.arm, at: buckets.arm.at };
      // A reservation must outlive the round trip that makes it, with time to spend it: on this clock a Table call
      // may take seconds (a host under load, or the benchmark's time-scaled clock, where 100 real ms are 15 s).
      const until = now + Math.max(this.holdMs, 4 * this.slowestRoundTripMs);
      const stored: Record<string, Array<[number, number]>> = {};
      for (const { kind, key } of SHARED_WINDOWS) {
        // Counted as spent when the reservation lapses: no window can see it spent any later.
        windows[key]!.add(until, tokens[kind]);
        const entries = windows[key]!.entries(now);
        if (entries.length > 0) stored[key] = entries;
      }
      grants[this.hostId] = {
        until,
        tokens: Object.fromEntries(SHARED_BUDGET_KINDS.filter((k) => tokens[k] > 0).map((k) => [k, tokens[k]])),
      };
      const etag = await this.timed(() =>
        this.store.write(subscriptionId, { buckets, windows: stored, grants }, row.etag),
      );
      if (etag !== false) {
        this.lastRow.set(subscriptionId, { buckets, windows: stored, grants, etag });
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
