import { describe, expect, it } from "vitest";
import { MessagesInHand } from "../../src/app/messagesInHand";
import { LEADS_WITH_MESSAGES_IN_HAND } from "../../src/reconcile/declareWindow";
import { manualClock } from "../support/harness";

const DECLARE = { kind: "declare", declaration: {} };
const RECONCILE = { kind: "reconcile", scaleSetId: "/vmss/a" };

describe("the messages a host has in hand", () => {
  it("is a backlog only past what a lone change brings, and not once they are handled", () => {
    const hand = new MessagesInHand(manualClock(), 30_000);
    const done = Array.from({ length: LEADS_WITH_MESSAGES_IN_HAND }, () => hand.took(RECONCILE));
    expect(hand.backlog).toBe(false);
    const oneMore = hand.took(RECONCILE);
    expect(hand.backlog).toBe(true);
    oneMore();
    expect(hand.backlog).toBe(false);
    for (const d of done) d();
  });

  it("feeds only declare messages to the intake gauge, which stays busy half a declare window after a burst", () => {
    const clock = manualClock();
    const hand = new MessagesInHand(clock, 30_000);
    const others = Array.from({ length: 10 }, () => hand.took(RECONCILE));
    expect(hand.intake.busy()).toBe(false);
    const declares = Array.from({ length: LEADS_WITH_MESSAGES_IN_HAND + 1 }, () => hand.took(DECLARE));
    expect(hand.intake.busy()).toBe(true);
    for (const d of [...declares, ...others]) d();
    clock.advance(14_999);
    expect(hand.intake.busy()).toBe(true);
    clock.advance(1);
    expect(hand.intake.busy()).toBe(false);
  });
});
