import { describe, expect, it } from "vitest";
import { PreconditionFailedError, ThrottledError } from "../../src/core/errors";
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
});
