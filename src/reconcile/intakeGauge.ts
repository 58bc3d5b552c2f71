import type { Clock } from "../core/ports";

/**
 * Whether this host is taking in a backlog of declarations: more than `trickle` declare messages in hand, or so until
 * less than `settleMs` ago. The tail is for the other hosts: a burst's declarations are spread over every host that
 * reads the queue, and when this host has stored its share another may still be storing the last declarations of the
 * same scale sets, which a pass started now would not read.
 */
export class IntakeGauge {
  private inHand = 0;
  private backlogUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: Pick<Clock, "now">,
    private readonly trickle: number,
    private readonly settleMs: number,
  ) {}

  /** A declare message taken in; call `left` when its handling ends, however it ends. */
  took(): void {
    this.inHand++;
  }

  left(): void {
    if (this.inHand > this.trickle) this.backlogUntil = this.clock.now() + this.settleMs;
    this.inHand--;
  }

  busy(): boolean {
    return this.inHand > this.trickle || this.clock.now() < this.backlogUntil;
  }
}
