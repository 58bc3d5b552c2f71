import { TableClient } from "@azure/data-tables";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { afterEach, describe, expect, it } from "vitest";
import { CONTROL_ROW, MODEL_ROW, targetPartition } from "../../src/azure/targets/rowKeys";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { eventGridEvent } from "../support/armEventSamples";
import { scaleSetRef } from "../support/refs";
import { testStorageConnectionString } from "../../devkit/storage";

/**
 * The event debounce under the load it exists for: while one delivery claims the window, other events of the same
 * burst invalidate the scale set's cache row. A Table pipeline policy plays those events: after every read of the
 * targets table it marks the scale set's model row stale (as a concurrent delivery would), before the reader writes.
 */

const vmss = scaleSetRef(DEMO.scaleSetId);
const declarePresent = {
  v: 1,
  kind: "declare",
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  state: "present",
};
const write = (id: string) =>
  eventGridEvent({
    id,
    resourceUri: DEMO.scaleSetId,
    operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
  });

function concurrentInvalidations(cacheTable: () => string): PipelinePolicy {
  let other: TableClient | undefined;
  return {
    name: "concurrentInvalidations",
    async sendRequest(request, next) {
      const response = await next(request);
      const table = cacheTable();
      if (request.method === "GET" && table && new URL(request.url).pathname.includes(`/${table}()`)) {
        other ??= TableClient.fromConnectionString(testStorageConnectionString(), table, {
          allowInsecureConnection: true,
        });
        await other.upsertEntity(
          {
            partitionKey: targetPartition(vmss),
            rowKey: MODEL_ROW,
            stale: true,
            staleReason: "a concurrent event",
            staleAt: Date.now(),
          },
          "Merge",
        );
      }
      return response;
    },
  };
}

/**
 * Just before each write of the target's control row (the debounce claim), a rival rewrites it (merges nothing new,
 * but moves its ETag): ours then conflicts.
 */
function rivalClaims(cacheTable: () => string): PipelinePolicy {
  let other: TableClient | undefined;
  return {
    name: "rivalClaims",
    async sendRequest(request, next) {
      const table = cacheTable();
      const target = `${decodeURIComponent(request.url)} ${typeof request.body === "string" ? request.body : ""}`;
      if (table && target.includes(CONTROL_ROW) && request.method !== "GET" && request.method !== "DELETE") {
        other ??= TableClient.fromConnectionString(testStorageConnectionString(), table, {
          allowInsecureConnection: true,
        });
        await other.updateEntity({ partitionKey: targetPartition(vmss), rowKey: CONTROL_ROW }, "Merge");
      }
      return next(request);
    },
  };
}

describe("event debounce", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("still enqueues the one reconcile while every other event of the burst rewrites the scale set's cache row", async () => {
    let table = "";
    h = await startHarness({
      cacheEnabled: true,
      env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "60" },
      storagePolicies: [concurrentInvalidations(() => table)],
    });
    await h.send(declarePresent);
    await h.drain();
    table = h.config.membershipsTable;
    expect(await h.services.handleResourceEvent(write("burst-1"))).toBe("invalidated+reconcile");
    expect(await h.queueDepth()).toBe(1);
    // The window holds for the rest of the burst.
    expect(await h.services.handleResourceEvent(write("burst-2"))).toBe("invalidated");
    expect(await h.queueDepth()).toBe(1);
  });

  it("a claim that keeps losing races enqueues anyway, and says so in the log", async () => {
    let table = "";
    const rivals = rivalClaims(() => table);
    h = await startHarness({
      cacheEnabled: true,
      env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "60" },
      storagePolicies: [rivals],
    });
    await h.send(declarePresent);
    await h.drain();
    table = h.config.membershipsTable;
    expect(await h.services.handleResourceEvent(write("contended-1"))).toBe("invalidated+reconcile");
    expect(await h.queueDepth()).toBe(1);
    expect(h.logs.lines.filter((l) => l.event === "event.debounce-contended")).toEqual([
      expect.objectContaining({ level: "warn", eventId: "contended-1", scaleSetId: DEMO.scaleSetId }),
    ]);
    // The event's cache marks were in the transaction that lost: the pass it asked for must read ARM, not the cache.
    expect(h.logs.lines.filter((l) => l.event === "enqueue" && l.kind === "reconcile")).toEqual([
      expect.objectContaining({ scaleSetId: DEMO.scaleSetId, fresh: true }),
    ]);
  });

  it("a stream of events that all lose the claim wakes the target once per window from one host", async () => {
    // In the contention benchmark every event lost the claim to the intake's control row writes and each enqueued a
    // pass of its own: 479 passes for one scale set, queued in front of the declarations they were delaying.
    let table = "";
    const rivals = rivalClaims(() => table);
    const clock = manualClock();
    h = await startHarness({
      clock,
      cacheEnabled: true,
      env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "60" },
      storagePolicies: [rivals],
    });
    await h.send(declarePresent);
    await h.drain();
    table = h.config.membershipsTable;
    for (const id of ["stream-1", "stream-2", "stream-3"]) await h.services.handleResourceEvent(write(id));
    expect(await h.queueDepth()).toBe(1);
    // Past the window, the next one wakes it again.
    clock.advance(61_000);
    expect(await h.services.handleResourceEvent(write("stream-4"))).toBe("invalidated+reconcile");
    expect(await h.queueDepth()).toBe(2);
  });
});
