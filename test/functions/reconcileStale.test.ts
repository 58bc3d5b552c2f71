import { InvocationContext, type Timer } from "@azure/functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { services } from "../../src/app/services";
import { reconcileStale } from "../../src/functions/reconcileStale";
import { DEMO } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { startFunctionWorld, type FunctionWorld } from "./support";

let world: FunctionWorld;
beforeAll(async () => {
  world = await startFunctionWorld();
});
afterAll(async () => {
  await world.stop();
});

const timer: Timer = {
  isPastDue: false,
  schedule: { adjustForDST: true },
  scheduleStatus: {
    last: "2026-12-02T09:55:00.000Z",
    next: "2026-12-02T10:05:00.000Z",
    lastUpdated: "2026-12-02T09:55:00.000Z",
  },
};

describe("reconcileStale (timer trigger), called as the host calls it", () => {
  it("finds a declared scale set the cache knows nothing of, reads it once, and asks for its reconcile", async () => {
    const s = services();
    await s.ready();
    const ref = scaleSetRef(DEMO.scaleSetId);
    await s.declarations.upsert(ref, {
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      state: "present",
      declaredAt: "2026-12-02T10:00:00.000Z",
      requestId: "r-1",
      declaredBy: QUEUE_DECLARER,
    });
    world.sim.control.resetStats();
    await reconcileStale(timer, new InvocationContext({ invocationId: "inv-timer", functionName: "reconcileStale" }));
    expect(world.sim.control.stats().gets).toBeGreaterThanOrEqual(1);
    expect((await world.queue.getProperties()).approximateMessagesCount).toBe(1);
  });
});
