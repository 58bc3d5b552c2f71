/**
 * A target's control row: every piece of coordination about one target (scale set, VM) in one entity of its own
 * partition, changed only by a conditional write on its ETag (or in a transaction with the rows it governs). This
 * module is the row's meaning, pure: its shape, the bounds every stored time is held to, and each transition (lease,
 * declare window, event debounce, attempt chain, declaration counters, writes in doubt). The store reads the row,
 * applies a transition, and writes it back with If-Match.
 */

import { z } from "zod";

/** What one lease holder hands the next, and who holds it now. `holder` "" = free. */
export interface LeaseState {
  holder: string;
  expiresAt: number;
  /** Another host found it held and asked for one more pass. */
  wanted: boolean;
  /** …of a pass that reads ARM, not the cache. */
  wantedFresh: boolean;
  /** What the previous holder left for the next (its view of the target's write budgets). */
  handover: string;
}

/** The declare window: declarations arriving close together share one pass (see reconcile/declareWindow.ts). */
export interface WindowState {
  openedAt: number;
  claimant: string;
  /** A leading pass reads at once: nothing joins it. */
  leading: boolean;
  /** A pass began reading the declarations after this: nothing joins the window any more. */
  closed: boolean;
}

/** A chain of re-enqueued passes: which attempt comes next, and when its message becomes visible. */
export interface AttemptState {
  attempt: number;
  nextAttemptAt: number;
  reason: string;
}

/** A write whose answer never came (a timeout, a dropped connection): it may still land while its ETag holds. */
export interface WriteInDoubt {
  resourceId: string;
  ifMatch: string;
  at: number;
}

/** Writes whose answer never came: they may still land while the resource keeps the ETag they were made on. */
export interface WriteDoubts {
  record(d: WriteInDoubt): void;
  /** How long a write of ours may still change `resourceId` at `etag` (0: none can). */
  remainingMs(resourceId: string, etag: string): number;
}

/** The target's declarations, counted where they change, so that a cap holds under any parallelism. */
export interface DeclarationCounts {
  present: number;
  /** Live `absent` rows (a finished one removed by the timer no longer counts). */
  absent: number;
  /** Present declarations by declaring principal. */
  byCaller: Record<string, number>;
}

/** The target's last pass that met a 412, a throttle or a failure: a record for people. */
export interface ProblemState {
  /** The target's ID as ARM spells it (the partition's key is lower-case). */
  targetId: string;
  at: number;
  result: string;
  reason: string;
  preconditionFailures: number;
  throttles: number;
}

export interface ControlState {
  /** Bumped by every change to a declaration row: a pass that read at this value read every declaration. */
  seq: number;
  lease: LeaseState;
  window: WindowState | undefined;
  /** When the last event-triggered pass was claimed (0: never). */
  debounceAt: number;
  attempt: AttemptState | undefined;
  counts: DeclarationCounts;
  doubts: WriteInDoubt[];
  lastProblem: ProblemState | undefined;
  /** When the timer's index says this target is next due (0: not in the index yet). */
  indexedDueAt: number;
}

export const FREE_LEASE: LeaseState = { holder: "", expiresAt: 0, wanted: false, wantedFresh: false, handover: "" };

export function emptyControl(): ControlState {
  return {
    seq: 0,
    lease: { ...FREE_LEASE },
    window: undefined,
    debounceAt: 0,
    attempt: undefined,
    counts: { present: 0, absent: 0, byCaller: {} },
    doubts: [],
    lastProblem: undefined,
    indexedDueAt: 0,
  };
}

/** The longest a stored time may lie ahead of the clock, per field: further is not something poolsync wrote. */
export interface ControlBounds {
  /** The reconcile lease's length (POOLSYNC_RECONCILE_LEASE_SECONDS). */
  leaseMs: number;
  /** How far a requeued pass may be put off (the longest Retry-After poolsync honours). */
  maxRequeueMs: number;
  /** How far the timer may put a target off. */
  maxDueMs: number;
}

/** Clock skew between hosts a stored "now" may carry. */
export const CLOCK_SKEW_MS = 60_000;
/** Writes in doubt kept at most (the oldest go first): each is a few hundred bytes of the row. */
export const MAX_DOUBTS = 32;
const MAX_TEXT = 1_024;

const num = z.number().finite();
const count = z.number().int().min(0).max(1_000_000);
const text = (max: number) => z.string().max(max);

/** The row's stored JSON, as schema: anything else is not a control row poolsync wrote. */
const schema = z.object({
  seq: count,
  lease: z.object({
    holder: text(256),
    expiresAt: num,
    wanted: z.boolean(),
    wantedFresh: z.boolean(),
    handover: text(16_000),
  }),
  window: z.object({ openedAt: num, claimant: text(MAX_TEXT), leading: z.boolean(), closed: z.boolean() }).optional(),
  debounceAt: num,
  attempt: z.object({ attempt: count, nextAttemptAt: num, reason: text(MAX_TEXT) }).optional(),
  counts: z.object({ present: count, absent: count, byCaller: z.record(text(MAX_TEXT), count) }),
  doubts: z.array(z.object({ resourceId: text(MAX_TEXT), ifMatch: text(256), at: num })).max(MAX_DOUBTS),
  lastProblem: z
    .object({
      targetId: text(MAX_TEXT),
      at: num,
      result: text(64),
      reason: text(MAX_TEXT),
      preconditionFailures: count,
      throttles: count,
    })
    .optional(),
  indexedDueAt: num,
});

export type ControlDecode = { ok: true; state: ControlState; problems: string[] } | { ok: false; reason: string };

/**
 * The stored text as a control state, held to its bounds: a time further ahead than poolsync ever writes it (a
 * planted value, a clock jump) is dropped, never obeyed, and named in `problems`. Text that does not parse at all is
 * not a control row (`ok: false`): the store rebuilds the row from the partition's declarations.
 */
export function decodeControl(stored: unknown, now: number, bounds: ControlBounds): ControlDecode {
  let raw: unknown;
  try {
    raw = typeof stored === "string" ? JSON.parse(stored) : undefined;
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      reason: parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join(".") || "row"}: ${i.message}`)
        .join("; "),
    };
  const s = parsed.data;
  const problems: string[] = [];
  const ahead = (at: number, max: number, what: string) => {
    const over = at > now + max + CLOCK_SKEW_MS;
    if (over) problems.push(`${what} ${new Date(Math.min(at, 8.64e15)).toISOString()} is beyond its bound`);
    return over;
  };
  const lease: LeaseState = ahead(s.lease.expiresAt, bounds.leaseMs, "lease.expiresAt")
    ? { ...FREE_LEASE, handover: s.lease.handover }
    : { ...s.lease };
  const window = s.window && !ahead(s.window.openedAt, 0, "window.openedAt") ? { ...s.window } : undefined;
  const debounceAt = ahead(s.debounceAt, 0, "debounceAt") ? 0 : s.debounceAt;
  const attempt =
    s.attempt && !ahead(s.attempt.nextAttemptAt, bounds.maxRequeueMs, "attempt.nextAttemptAt")
      ? { ...s.attempt }
      : undefined;
  const doubts = s.doubts.filter((d) => !ahead(d.at, 0, "doubt.at"));
  const lastProblem = s.lastProblem && !ahead(s.lastProblem.at, 0, "lastProblem.at") ? s.lastProblem : undefined;
  const indexedDueAt = ahead(s.indexedDueAt, bounds.maxDueMs, "indexedDueAt") ? 0 : s.indexedDueAt;
  return {
    ok: true,
    problems,
    state: {
      seq: s.seq,
      lease,
      window,
      debounceAt,
      attempt,
      counts: { present: s.counts.present, absent: s.counts.absent, byCaller: { ...s.counts.byCaller } },
      doubts,
      lastProblem: lastProblem ? { ...lastProblem } : undefined,
      indexedDueAt,
    },
  };
}

export function encodeControl(s: ControlState): string {
  return JSON.stringify(s);
}

// ——— the reconcile lease ———

export type LeaseTakeResult =
  | { kind: "acquired"; handover: string | undefined; state: ControlState }
  /** Held by another: `state` asks it for one more pass (unchanged when someone already asked as much). */
  | { kind: "held"; firstToAsk: boolean; expiresAt: number; state: ControlState; changed: boolean };

/** Takes the lease if free, expired or ours; else asks its holder for one more pass (fresh: one that reads ARM). */
export function takeLease(
  s: ControlState,
  holder: string,
  now: number,
  ttlMs: number,
  fresh: boolean,
): LeaseTakeResult {
  const l = s.lease;
  if (l.holder !== "" && l.holder !== holder && l.expiresAt > now) {
    if (l.wanted && (l.wantedFresh || !fresh))
      return { kind: "held", firstToAsk: false, expiresAt: l.expiresAt, state: s, changed: false };
    return {
      kind: "held",
      firstToAsk: !l.wanted,
      expiresAt: l.expiresAt,
      changed: true,
      state: { ...s, lease: { ...l, wanted: true, wantedFresh: l.wantedFresh || fresh } },
    };
  }
  // Free, expired (its holder died) or ours: the pass about to run reads everything, so earlier requests are met.
  return {
    kind: "acquired",
    handover: l.handover || undefined,
    state: { ...s, lease: { holder, expiresAt: now + ttlMs, wanted: false, wantedFresh: false, handover: l.handover } },
  };
}

/** Pushes the expiry on; undefined when the lease is no longer ours. */
export function renewLease(s: ControlState, holder: string, now: number, ttlMs: number): ControlState | undefined {
  if (s.lease.holder !== holder) return undefined;
  return { ...s, lease: { ...s.lease, expiresAt: now + ttlMs } };
}

export type LeaseRelease =
  { again: false; state: ControlState | undefined } | { again: true; fresh: boolean; state: ControlState };

/**
 * Lets go, unless another pass was asked for meanwhile: then the lease is kept (renewed), the request cleared, and
 * the answer says to run once more. `state` undefined: not ours any more (nothing to write).
 */
export function releaseLease(
  s: ControlState,
  holder: string,
  now: number,
  ttlMs: number,
  handover: string | undefined,
): LeaseRelease {
  const l = s.lease;
  if (l.holder !== holder) return { again: false, state: undefined };
  const kept = handover ?? l.handover;
  if (l.wanted && ttlMs > 0)
    return {
      again: true,
      fresh: l.wantedFresh,
      state: { ...s, lease: { holder, expiresAt: now + ttlMs, wanted: false, wantedFresh: false, handover: kept } },
    };
  // Free, with what the next holder should know.
  return { again: false, state: { ...s, lease: { ...FREE_LEASE, handover: kept } } };
}

// ——— the declare window ———

export type WindowClaim = "leading" | "opened" | "joined";

/**
 * Which declaration schedules the target's one gathered pass. "leading": the target was quiet (no window for
 * `quietMs`), this declaration's pass runs at once and nothing joins it; "opened": this claimant opened a window (or
 * opened it earlier and is back: a redelivery) and must enqueue its pass; "joined": a pass already scheduled reads it.
 * `state` undefined: nothing to write.
 */
export function claimWindow(
  s: ControlState,
  claimant: string,
  now: number,
  w: { windowMs: number; joinableMs: number; quietMs: number },
): { claim: WindowClaim; state: ControlState | undefined } {
  const win = s.window;
  const age = win ? now - win.openedAt : Number.POSITIVE_INFINITY;
  // A redelivery of the message that claimed: its pass may not have happened, so it goes again.
  if (win && win.claimant === claimant && age < (win.leading ? w.windowMs : w.joinableMs) && !win.closed)
    return { claim: win.leading ? "leading" : "opened", state: undefined };
  // Open until a pass closes it, however long the queue keeps its pass waiting: the pass closes before it reads.
  if (win && !win.leading && !win.closed && age < w.joinableMs) return { claim: "joined", state: undefined };
  // An infinite quiet time (the caller is in a burst) never leads.
  const leading = w.quietMs !== Number.POSITIVE_INFINITY && age >= w.quietMs;
  return {
    claim: leading ? "leading" : "opened",
    state: { ...s, window: { openedAt: now, claimant, leading, closed: false } },
  };
}

/** A window opened behind a leading claim, whose pass is still to come (it will read every declaration). */
export function windowPending(s: ControlState, now: number, windowMs: number): boolean {
  const w = s.window;
  return w !== undefined && !w.leading && !w.closed && now - w.openedAt < windowMs;
}

/** A pass is about to read the declarations: nothing joins the open window after this. */
export function closeWindow(s: ControlState): ControlState {
  return s.window && !s.window.closed ? { ...s, window: { ...s.window, closed: true } } : s;
}

// ——— events ———

/** One event-triggered pass per debounce window: claimed, or already claimed inside the window. */
export function claimDebounce(
  s: ControlState,
  now: number,
  windowMs: number,
): { claimed: boolean; state: ControlState | undefined } {
  if (s.debounceAt !== 0 && now - s.debounceAt < windowMs && s.debounceAt <= now + CLOCK_SKEW_MS)
    return { claimed: false, state: undefined };
  return { claimed: true, state: { ...s, debounceAt: now } };
}

// ——— writes in doubt ———

/** Remembers writes whose answer never came; the oldest go first past MAX_DOUBTS. */
export function addDoubts(s: ControlState, doubts: readonly WriteInDoubt[]): ControlState {
  if (doubts.length === 0) return s;
  return { ...s, doubts: [...s.doubts, ...doubts].slice(-MAX_DOUBTS) };
}

/** Forgets writes in doubt older than `maxAgeMs`: by then they have landed or never will. */
export function expireDoubts(s: ControlState, now: number, maxAgeMs: number): ControlState {
  const kept = s.doubts.filter((d) => now - d.at < maxAgeMs);
  return kept.length === s.doubts.length ? s : { ...s, doubts: kept };
}

/**
 * How long a write to `resourceId` whose answer never came may still land on the state at `etag`: until its doubt
 * expires, while the resource still holds the ETag that write was conditional on (once the ETag moved, it never
 * lands). 0: nothing of ours can still change it.
 */
export function doubtRemainingMs(
  doubts: readonly WriteInDoubt[],
  resourceId: string,
  etag: string,
  now: number,
  maxAgeMs: number,
): number {
  const id = resourceId.toLowerCase();
  let remaining = 0;
  for (const d of doubts)
    if (d.resourceId.toLowerCase() === id && d.ifMatch === etag) remaining = Math.max(remaining, d.at + maxAgeMs - now);
  return Math.max(0, remaining);
}
