import type { Clock } from "../core/ports";
import { LEADS_WITH_MESSAGES_IN_HAND } from "../reconcile/declareWindow";
import { IntakeGauge } from "../reconcile/intakeGauge";

/**
 * The queue messages this host has in hand: a burst's backlog holds many, a lone change one. More than
 * LEADS_WITH_MESSAGES_IN_HAND and nothing it declares leads; its declare messages feed the intake gauge, whose backlog
 * (and half a window after) sends gathered passes back to the queue.
 */
export class MessagesInHand {
  private count = 0;
  readonly intake: IntakeGauge;

  constructor(clock: Pick<Clock, "now">, declareWindowMs: number) {
    this.intake = new IntakeGauge(clock, LEADS_WITH_MESSAGES_IN_HAND, declareWindowMs / 2);
  }

  /** A message taken in; the answer is called when its handling ends, however it ends. */
  took(body: unknown): () => void {
    const declare = isDeclareBody(body);
    this.count++;
    if (declare) this.intake.took();
    return () => {
      this.count--;
      if (declare) this.intake.left();
    };
  }

  /** A backlog: more messages in hand than a lone change brings. */
  get backlog(): boolean {
    return this.count > LEADS_WITH_MESSAGES_IN_HAND;
  }
}

/** A declare message as the trigger hands it (parsed JSON); the handler validates it, this only counts it. */
const isDeclareBody = (body: unknown) =>
  typeof body === "object" && body !== null && (body as { kind?: unknown }).kind === "declare";
