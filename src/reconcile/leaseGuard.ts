import type { Clock } from "../core/ports";
import { comeBack, type ComeBack } from "./passResult";

/**
 * What a pass knows of its own lease, checked before every ARM write. A lease in storage only excludes passes that
 * notice time passing: a host paused mid-pass (a frozen process, a long GC pause, a VM migration) wakes up past its
 * lease, after another host took the target, and would write on what it read before the pause. If-Match keeps such a
 * write from losing anyone's change, but not from undoing a newer pass's finished state: a `present` sent after the
 * newer pass proved the pool `absent` lands on the unchanged ETag. So a write goes out only while the lease is known
 * to outlast it: at least `flightMs` (the longest a sent write may take to reach ARM) of it left, renewed first if not.
 */
export class LeaseGuard {
  /** Until when the lease is ours at least: the time its last take or renewal was sent, plus its length. */
  #validUntil = Number.NEGATIVE_INFINITY;
  #lost = false;

  constructor(
    private readonly clock: Pick<Clock, "now">,
    private readonly ttlMs: number,
    private readonly flightMs: number,
    /** Pushes the lease's expiry on; false when it is no longer ours. */
    private readonly renew: () => Promise<boolean>,
  ) {}

  /** The lease was taken or renewed by a request sent at `sentAt`. */
  held(sentAt: number): void {
    if (!this.#lost) this.#validUntil = Math.max(this.#validUntil, sentAt + this.ttlMs);
  }

  lost(): void {
    this.#lost = true;
  }

  get isLost(): boolean {
    return this.#lost;
  }

  /**
   * Undefined when a write sent now lands inside the lease; when the lease is gone, the pass's come-back: it stops
   * before its next write, and the queue brings the target back to whoever holds it.
   */
  async ensureHeld(): Promise<ComeBack | undefined> {
    if (!this.#lost && this.#validUntil - this.clock.now() > this.flightMs) return undefined;
    if (!this.#lost) {
      const sentAt = this.clock.now();
      if (await this.renew()) this.held(sentAt);
      else this.lost();
    }
    if (this.#lost || this.#validUntil - this.clock.now() <= this.flightMs)
      return comeBack(
        "retry",
        1_000,
        "the reconcile lease lapsed before this write (another host may hold the target now)",
      );
    return undefined;
  }
}
