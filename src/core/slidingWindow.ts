/**
 * A request budget over a window, as CRP's `<Policy>3Min` / `<Policy>30Min` and NRP's 5-minute limits meter it:
 * at most `size` requests per `windowMs`. Where such a window starts is not said anywhere (CRP's answers carry only
 * the count left), and a fixed window that turns at an unknown moment lets a client that counts from its own start
 * spend a window's worth on either side of the turn. Counting every request of the last `windowMs` (a sliding
 * window) is safe against any phase: no fixed window of that length can hold more than the sliding count allows, and
 * a burst that starts fresh spends as much as the fixed window gives (the window's worth at once, the next when the
 * first has aged out).
 *
 * Requests are counted in slots of `slotMs`; a slot's requests count until its end plus the window plus `marginMs`
 * (the request's latency and the server's clock are not ours). Pure: the caller passes the time.
 */

export interface WindowSpec {
  size: number;
  windowMs: number;
}

interface Slot {
  at: number;
  n: number;
}

/** Slots per window: a slot's end is the most an entry is counted late by. */
const SLOTS_PER_WINDOW = 60;

export class SlidingWindow {
  private slots: Slot[] = [];
  private readonly slotMs: number;
  private readonly marginMs: number;
  /** How late a request may reach the server after it was counted here, as its owner last measured it. */
  private lateMs = 0;

  constructor(readonly spec: WindowSpec) {
    this.slotMs = Math.max(1, Math.floor(spec.windowMs / SLOTS_PER_WINDOW));
    // A second and a hundredth of the window: a request reaches the server a latency after it is counted here.
    this.marginMs = 1_000 + Math.ceil(spec.windowMs / 100);
  }

  private expiry(s: Slot): number {
    return s.at + this.slotMs + this.spec.windowMs + this.marginMs + this.lateMs;
  }

  /**
   * The longest a request has taken to reach the server and back lately (on a slow host, or a time-scaled clock where
   * a real millisecond is many): a request counts that much longer, since the window that holds it began that much
   * later than it was counted.
   */
  setLateness(ms: number): void {
    this.lateMs = Math.max(0, ms);
  }

  private drop(now: number): void {
    let i = 0;
    while (i < this.slots.length && this.expiry(this.slots[i]!) <= now) i++;
    if (i > 0) this.slots.splice(0, i);
  }

  /** Requests counted now. */
  count(now: number): number {
    this.drop(now);
    let n = 0;
    for (const s of this.slots) n += s.n;
    return n;
  }

  /** Counts `n` requests at `at` (now, or later for a reservation that may be spent until then). */
  add(at: number, n = 1): void {
    if (n <= 0) return;
    const slotAt = Math.floor(at / this.slotMs) * this.slotMs;
    // Kept in time order: a later slot goes at the end; an earlier one (rare: a reservation's slot) where it belongs.
    let i = this.slots.length;
    while (i > 0 && this.slots[i - 1]!.at > slotAt) i--;
    const prev = this.slots[i - 1];
    if (prev && prev.at === slotAt) prev.n += n;
    else this.slots.splice(i, 0, { at: slotAt, n });
  }

  /** Takes `n` back from the slot of `at` (a reservation not spent), never below zero. */
  remove(at: number, n: number): void {
    const slotAt = Math.floor(at / this.slotMs) * this.slotMs;
    const s = this.slots.find((x) => x.at === slotAt);
    if (s) s.n = Math.max(0, s.n - n);
  }

  /** Milliseconds until `n` more requests fit under `limit` (default the window's size); 0 = now. */
  waitMs(now: number, n = 1, limit = this.spec.size): number {
    let over = this.count(now) + n - limit;
    if (over <= 0) return 0;
    if (n > limit) return Number.POSITIVE_INFINITY;
    for (const s of this.slots) {
      over -= s.n;
      if (over <= 0) return this.expiry(s) - now;
    }
    return Number.POSITIVE_INFINITY;
  }

  /**
   * The server's own count of what is left (every caller's requests in it): the requests beyond ours are counted as
   * made now, so they age out no sooner than the window that holds them turns.
   */
  learnRemaining(now: number, remaining: number): void {
    const others = this.spec.size - remaining - this.count(now);
    if (others > 0) this.add(now, others);
  }

  /** The slots as counts (for a row every host shares). */
  entries(now: number): Array<[number, number]> {
    this.drop(now);
    return this.slots.filter((s) => s.n > 0).map((s) => [s.at, s.n]);
  }

  /** Replaces the slots with `entries` (as `entries` gave them), dropping what has aged out. */
  load(entries: ReadonlyArray<readonly [number, number]>, now: number): void {
    this.slots = [];
    for (const [at, n] of [...entries].sort((a, b) => a[0] - b[0])) this.add(at, n);
    this.drop(now);
  }

  /** Nothing counted any more: the window can be forgotten. */
  empty(now: number): boolean {
    return this.count(now) === 0;
  }
}
