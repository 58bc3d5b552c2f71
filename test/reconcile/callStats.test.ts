import { describe, expect, it } from "vitest";
import { ReadPacer } from "../../src/azure/readPacing";
import { OWN_PACING, PreconditionFailedError, ThrottledError } from "../../src/core/errors";
import { parseBackendPoolId } from "../../src/core/resourceIds";
import { CallStats } from "../../src/reconcile/callStats";
import { demoTargetSuite } from "../support/declareOn";
import { DEMO } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/** The ARM calls one pass made, counted on the real ports (the SDK against the simulator) as they answer. */
describe("CallStats", () => {
  const ref = scaleSetRef(DEMO.scaleSetId);
  const suite = demoTargetSuite(ref);

  it("counts each read and write, and what the reads were spent on, by call", async () => {
    const stats = new CallStats();
    const compute = stats.wrap(suite.h.services.compute);
    const network = stats.wrapNetwork(suite.h.services.network);
    const model = await compute.getScaleSet(ref);
    await compute.listInstances(ref);
    const pool = parseBackendPoolId(DEMO.poolId);
    if (!pool.ok) throw new Error(pool.reason);
    await network.getBackendPool(pool.value);
    await compute.writeScaleSetNics(ref, model, model.nics, { ifMatch: model.etag, clientRequestId: "stats-1" });
    expect({ reads: stats.reads, writes: stats.writes }).toEqual({ reads: 3, writes: 1 });
    expect(stats.byCall).toEqual({ getScaleSet: 1, listInstances: 1, getBackendPool: 1, writeScaleSetNics: 1 });
  });

  it("counts a 412 and a 429 as what they are, and still hands the error to the pass", async () => {
    const stats = new CallStats();
    const compute = stats.wrap(suite.h.services.compute);
    const model = await compute.getScaleSet(ref);
    suite.h.sim.control.write(
      DEMO.scaleSetId,
      (r) => void ((r as { tags?: unknown }).tags = { moved: "by another writer" }),
    );
    await expect(
      compute.writeScaleSetNics(ref, model, model.nics, { ifMatch: model.etag, clientRequestId: "stats-2" }),
    ).rejects.toBeInstanceOf(PreconditionFailedError);
    suite.h.sim.control.injectFault({ method: "GET", path: "virtualMachineScaleSets/[^/]+$", retryAfterSeconds: 5 });
    await expect(compute.getScaleSet(ref)).rejects.toBeInstanceOf(ThrottledError);
    expect(stats).toMatchObject({ reads: 2, writes: 1, preconditionFailures: 1, throttles: 1 });
  });

  it("does not count a read poolsync's own pacing held back as a throttle: ARM never saw it", async () => {
    const stats = new CallStats();
    const compute = stats.wrap(suite.h.services.compute);
    const pacer = (suite.h.services.compute as unknown as { readPacer: ReadPacer }).readPacer;
    // Longer than the read may wait in the invocation (POOLSYNC_PACING_MAX_WAIT_SECONDS, 5 s): refused unsent.
    pacer.throttled(ref.subscriptionId.toLowerCase(), 10 * 60_000);
    const before = suite.h.sim.control.stats().requests;
    await expect(compute.getScaleSet(ref)).rejects.toMatchObject({ code: OWN_PACING });
    expect(suite.h.sim.control.stats().requests).toBe(before);
    expect(stats).toMatchObject({ reads: 1, throttles: 0 });
    pacer.throttled(ref.subscriptionId.toLowerCase(), 0);
  });
});
