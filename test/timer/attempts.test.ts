import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { STUCK_PENDING_MS } from "../../src/reconcile/reconcileStale";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { decodeQueueBody } from "../support/queueBody";
import { scaleSetRef } from "../support/refs";

/**
 * A reconcile that re-enqueues itself (here: ARM throttles every read for 30 minutes) leaves its declarations
 * pending. The timer must neither start a second chain beside the invisible message nor, once that message is lost,
 * restart the count: the chain's attempts carry over, so POOLSYNC_MAX_ATTEMPTS bounds it.
 */
const ref = scaleSetRef(DEMO.scaleSetId);

describe("re-enqueued reconciles and the timer", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("respects the chain's next attempt time, then carries its attempt count on until POOLSYNC_MAX_ATTEMPTS fails it", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({ clock, env: { POOLSYNC_MAX_ATTEMPTS: "2", POOLSYNC_PACING_MAX_WAIT_SECONDS: "5" } });
    h.sim.control.injectFault({
      method: "GET",
      path: "virtualMachineScaleSets/etag-k8s-mp-0$",
      retryAfterSeconds: 1800,
      times: 1,
    });
    await h.services.declarations.upsert(ref, {
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      state: "present",
      declaredAt: new Date(clock.now()).toISOString(),
      requestId: "r1",
      declaredBy: QUEUE_DECLARER,
    });
    expect(await h.services.reconcile(ref, { reason: "declared", attempt: 0 })).toMatchObject({
      result: "requeued",
      requeueAfterMs: 1_800_000,
    });
    expect(await h.queueDepth()).toBe(1);

    // Pending for 11 minutes, but its next attempt is due in 19: the timer adds nothing.
    clock.advance(STUCK_PENDING_MS + 60_000);
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 0, waitingForRetry: 1 });
    expect(await h.queueDepth()).toBe(1);

    // The message is lost; well after its time the timer asks again, as attempt 1, not 0.
    await h.queue.clearMessages();
    clock.advance(1_800_000 + STUCK_PENDING_MS);
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 1 });
    const [message] = (await h.queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 1 }))
      .receivedMessageItems;
    expect(decodeQueueBody(message!.messageText)).toMatchObject({
      kind: "reconcile",
      scaleSetId: DEMO.scaleSetId,
      attempt: 1,
    });
    await h.queue.clearMessages();

    // Attempt 1 is throttled again (attempt 2 allowed); attempt 2 throttled once more is the last: failed, with why.
    h.sim.control.injectFault({
      method: "PUT",
      path: "virtualMachineScaleSets/etag-k8s-mp-0$",
      retryAfterSeconds: 60,
      times: 2,
    });
    expect(await h.services.reconcile(ref, { reason: "timer", attempt: 1 })).toMatchObject({ result: "requeued" });
    clock.advance(61_000);
    expect(await h.services.reconcile(ref, { reason: "retry", attempt: 2 })).toMatchObject({ result: "failed" });
    const [d] = await h.services.declarations.listForTarget(ref);
    expect(d?.outcome).toMatchObject({
      kind: "failed",
      reason: expect.stringMatching(/^gave up after 2 re-enqueued attempts: throttled/),
    });
  });
});
