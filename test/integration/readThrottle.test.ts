import { afterEach, describe, expect, it } from "vitest";
import { OWN_PACING, ThrottledError } from "../../src/core/errors";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * A read 429 closes the subscription's read bucket until its Retry-After. Later reads of the process must not sleep
 * that out inside an invocation (up to 6 hours, past every timeout): a wait longer than
 * POOLSYNC_PACING_MAX_WAIT_SECONDS fails the read as throttled, so the reconcile re-enqueues itself; a shorter one
 * ends as soon as the request is aborted.
 */
const ref = scaleSetRef(DEMO.scaleSetId);
/** ARM's own read throttle (it names no CRP bucket): every read of the subscription waits. */
const ARM_READS_429 = {
  error: { code: "TooManyRequests", message: "Number of read requests for subscription exceeded the limit." },
};
const throttleNextGet = (h: Harness, seconds: number) =>
  h.sim.control.injectFault({
    method: "GET",
    path: "virtualMachineScaleSets/etag-k8s-mp-0$",
    status: 429,
    retryAfterSeconds: seconds,
    body: ARM_READS_429,
  });

describe("a read 429 and the reads after it", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("a later reconcile re-enqueues for the rest of the Retry-After at once, without sending the read", async () => {
    h = await startHarness({ env: { POOLSYNC_PACING_MAX_WAIT_SECONDS: "5" } });
    await h.services.declarations.upsert(ref, {
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      state: "present",
      declaredAt: new Date().toISOString(),
      requestId: "r1",
      declaredBy: { id: "queue", name: "queue", via: "queue" },
    });
    throttleNextGet(h, 600);
    expect(await h.services.reconcile(ref, { reason: "first", attempt: 0 })).toMatchObject({
      result: "requeued",
      requeueAfterMs: 600_000,
    });
    const gets = h.sim.control.stats().gets;
    const started = Date.now();
    const second = await h.services.reconcile(ref, { reason: "second", attempt: 0 });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(second).toMatchObject({ result: "requeued", reason: expect.stringContaining("paced for") });
    expect(second.requeueAfterMs).toBeGreaterThan(590_000);
    expect(h.sim.control.stats().gets).toBe(gets);
  });

  it("the read itself says throttled with the remaining wait as its Retry-After", async () => {
    h = await startHarness({ env: { POOLSYNC_PACING_MAX_WAIT_SECONDS: "5" } });
    throttleNextGet(h, 120);
    await expect(h.services.compute.getScaleSet(ref)).rejects.toBeInstanceOf(ThrottledError);
    const err = await h.services.compute.getScaleSet(ref).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottledError);
    expect((err as ThrottledError).retryAfterMs).toBeGreaterThan(115_000);
  });

  it("a wait within the cap ends when the request's own timeout aborts it, as held by our pacing (unsent)", async () => {
    h = await startHarness({ env: { POOLSYNC_PACING_MAX_WAIT_SECONDS: "600", POOLSYNC_ARM_TIMEOUT_SECONDS: "1" } });
    throttleNextGet(h, 300);
    await expect(h.services.compute.getScaleSet(ref)).rejects.toBeInstanceOf(ThrottledError);
    const started = Date.now();
    const err = await h.services.compute.getScaleSet(ref).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(err).toMatchObject({ name: "ThrottledError", code: OWN_PACING });
    expect((err as ThrottledError).retryAfterMs).toBeGreaterThan(290_000);
  });

  it("a 429 naming a CRP bucket closes reads of that kind only: the scale set's instance LIST still goes (issue 26)", async () => {
    h = await startHarness({ env: { POOLSYNC_PACING_MAX_WAIT_SECONDS: "5" } });
    h.sim.control.injectFault({
      method: "GET",
      path: "virtualMachineScaleSets/etag-k8s-mp-0$",
      status: 429,
      retryAfterSeconds: 600,
      body: {
        code: "OperationNotAllowed",
        message: "The server rejected the request because too many requests have been received for this subscription.",
        details: [
          { code: "TooManyRequests", target: "GetVMScaleSet3Min", message: '{"operationGroup":"GetVMScaleSet3Min"}' },
        ],
      },
    });
    await expect(h.services.compute.getScaleSet(ref)).rejects.toBeInstanceOf(ThrottledError);
    // Another bucket (HighCostGetVMScaleSet…): answered, not paced for 600 s.
    expect((await h.services.compute.listInstances(ref)).length).toBeGreaterThan(0);
    // The same kind of read waits out the Retry-After (here: refused at once as throttled, past the 5 s cap).
    const gets = h.sim.control.stats().gets;
    await expect(h.services.compute.getScaleSet(ref)).rejects.toBeInstanceOf(ThrottledError);
    expect(h.sim.control.stats().gets).toBe(gets);
  });

  it("a 429 naming no bucket (ARM's own subscription reads) still closes every read of the subscription", async () => {
    h = await startHarness({ env: { POOLSYNC_PACING_MAX_WAIT_SECONDS: "5" } });
    h.sim.control.injectFault({
      method: "GET",
      path: "virtualMachineScaleSets/etag-k8s-mp-0$",
      status: 429,
      retryAfterSeconds: 600,
      body: ARM_READS_429,
    });
    await expect(h.services.compute.getScaleSet(ref)).rejects.toBeInstanceOf(ThrottledError);
    await expect(h.services.compute.listInstances(ref)).rejects.toBeInstanceOf(ThrottledError);
  });
});
