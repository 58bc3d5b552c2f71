/**
 * The targets this host woke after losing the debounce claim, until their window ends. A claim loses when the target's
 * control row keeps moving (an intake storing a stream of declarations, a pass committing): without this every event
 * of such a stream enqueued a pass of its own, and those passes queued in front of the declarations that caused the
 * contention. One wake per window per host covers them: it is delayed to the window's end and reads ARM. Other hosts
 * may each add one; the claim in storage is what bounds them when it can be won.
 */
export class ContendedWakes {
  private readonly until = new Map<string, number>();

  constructor(private readonly maxTargets = 10_000) {}

  /** Whether this host already woke `targetId` for a window still open at `now`. */
  covered(targetId: string, now: number): boolean {
    const end = this.until.get(targetId.toLowerCase());
    return end !== undefined && now < end;
  }

  noteWoken(targetId: string, now: number, windowMs: number): void {
    if (this.until.size >= this.maxTargets) {
      for (const [key, end] of this.until) if (end <= now) this.until.delete(key);
      // Still full of open windows: forgetting the oldest costs at most one more pass.
      if (this.until.size >= this.maxTargets) this.until.delete(this.until.keys().next().value as string);
    }
    this.until.set(targetId.toLowerCase(), now + windowMs);
  }
}
