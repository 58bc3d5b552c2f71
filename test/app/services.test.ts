import { TableClient } from "@azure/data-tables";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { QueueClient } from "@azure/storage-queue";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import { createServices } from "../../src/app/services";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { targetRef } from "../support/declareOn";
import { DEMO, startHarness, type Harness } from "../support/harness";

/**
 * The composition root, built as a process builds it, over Azurite and the ARM simulator through the real SDK edges:
 * the triggers' entry points reach the parts each needs, wired so that what they promise holds end to end.
 */
const REF = targetRef(DEMO.scaleSetId);

const declaration = (requestId: string): Declaration => ({
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  ipConfiguration: "",
  state: "present",
  declaredAt: new Date().toISOString(),
  requestId,
  declaredBy: QUEUE_DECLARER,
});

describe("createServices", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.stop();
  });

  it("ready creates the targets table, the shared table, the work queue and its poison queue where missing, once", async () => {
    const names = { membershipsTable: uniqueName("m"), cacheTable: uniqueName("c"), queueName: uniqueName("q-") };
    const config = { ...h.config, ...names, poisonQueueName: `${names.queueName}-poison` };
    let tableRequests = 0;
    const counting: PipelinePolicy = {
      name: "countTableRequests",
      sendRequest: (r, next) => (tableRequests++, next(r)),
    };
    const host = createServices(config, { log: memoryLogger(), storagePolicies: [counting] });
    const table = (name: string) =>
      TableClient.fromConnectionString(testStorageConnectionString(), name, { allowInsecureConnection: true });
    const queue = (name: string) => new QueueClient(testStorageConnectionString(), name);
    const exists = async () => {
      const tables = await Promise.all(
        [names.membershipsTable, names.cacheTable].map((n) =>
          table(n)
            .getAccessPolicy()
            .then(
              () => true,
              () => false,
            ),
        ),
      );
      const queues = await Promise.all([names.queueName, config.poisonQueueName].map((n) => queue(n).exists()));
      return [...tables, ...queues];
    };
    expect(await exists()).toEqual([false, false, false, false]);

    await Promise.all([host.ready(), host.ready()]);
    expect(await exists()).toEqual([true, true, true, true]);
    expect(tableRequests).toBe(2);
    // Every trigger asks first; only the first asking of the process goes to storage.
    await host.ready();
    expect(tableRequests).toBe(2);
  });

  it("a declare message is stored, reconciled through the ARM edges and recorded: the pool on the model and every instance", async () => {
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    expect(await h.drain()).toMatchObject([{ result: "reconciled", report: { declarations: 1, armWrites: 3 } }]);
    expect(h.sim.control.poolMembers(DEMO.poolId)).toHaveLength(2);
    expect(await h.services.declarations.listForTarget(REF)).toMatchObject([{ backendPoolId: DEMO.poolId }]);
    // The target's history has the pass's three writes, committed with it.
    const history = await h.services.history.page(DEMO.scaleSetId, 10);
    expect(history.entries.filter((e) => e.kind === "write")).toHaveLength(3);
  });

  it("a preview and a plan answer what storing and reconciling would do, and write neither storage nor ARM", async () => {
    expect(await h.services.previewDeclare(REF, declaration("preview-1"))).toMatchObject({ result: "created" });
    expect(await h.services.declarations.listForTarget(REF)).toEqual([]);

    const plan = await h.services.plan(REF, declaration("preview-1"));
    expect(plan).toMatchObject({ targetId: DEMO.scaleSetId, declarations: 1, skipped: [], unplaceable: [] });
    // The model and its two instances would each be written to add the pool.
    expect(plan.writes).toHaveLength(3);
    expect(h.sim.control.stats()).toMatchObject({ puts: 0, patches: 0, instancePuts: 0 });
    expect(h.sim.control.poolMembers(DEMO.poolId)).toEqual([]);
    expect(await h.services.declarations.listForTarget(REF)).toEqual([]);
  });

  it("a message that can never succeed goes to the poison queue at once, with the reason beside what was received", async () => {
    await h.send({ v: 1, kind: "declare", scaleSetId: "not-an-arm-id", backendPoolId: DEMO.poolId, state: "present" });
    await h.drain();
    expect(await h.poisonMessages()).toEqual([
      expect.objectContaining({ reason: expect.stringContaining("scaleSetId"), received: expect.any(String) }),
    ]);
    expect(await h.queueDepth()).toBe(0);
  });
});
