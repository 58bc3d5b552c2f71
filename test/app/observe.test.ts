import { QueueClient } from "@azure/storage-queue";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { eventAttributes, recordEventOutcome, timedStaleRun } from "../../src/app/observe";
import { StorageWorkQueue } from "../../src/azure/workQueue";
import { resetGauges } from "../../src/telemetry/gauges";
import { eventGridEvent } from "../support/armEventSamples";
import { manualClock } from "../support/harness";
import { startInMemoryTelemetry, total } from "../support/otel";

let otel: ReturnType<typeof startInMemoryTelemetry>;
beforeEach(() => {
  otel = startInMemoryTelemetry();
});
afterEach(async () => {
  resetGauges();
  await otel.stop();
});

/** A reconcile queue and its poison queue on Azurite, of this test's own (created only when asked). */
function queues(): StorageWorkQueue {
  const name = uniqueName("obs-");
  const cs = testStorageConnectionString();
  return new StorageWorkQueue(new QueueClient(cs, name), new QueueClient(cs, `${name}-poison`));
}

const gauge = async (name: string) => (await otel.points(name)).map((p) => p.value);

const VMSS =
  "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/web";

describe("what the composition root records around events and the timer", () => {
  it("counts an event by the action the workbook splits by, keeping the handler's own word as detail", async () => {
    recordEventOutcome("own-write");
    recordEventOutcome("out-of-scope");
    recordEventOutcome("deleted+reconcile");
    recordEventOutcome("deleted");
    const points = await otel.points("poolsync.events");
    expect(total(points, { action: "ignored" })).toBe(2);
    expect(total(points, { action: "ignored", detail: "own-write" })).toBe(1);
    expect(total(points, { action: "enqueued", detail: "deleted+reconcile" })).toBe(1);
    expect(total(points, { action: "invalidated", detail: "deleted" })).toBe(1);
  });

  it("names an event's span by what ARM's event says: correlation, operation, caller, id, type, subject", () => {
    const raw = eventGridEvent({
      resourceUri: VMSS,
      operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      clientRequestId: "theirs-1",
      id: "ev-1",
    });
    expect(eventAttributes(raw)).toEqual({
      "azure.arm.correlation_id": "7ddf2a3b-3f4c-4d44-9e1c-111111111111",
      "poolsync.client_request_id": "theirs-1",
      "azure.arm.operation_name": "Microsoft.Compute/virtualMachineScaleSets/write",
      "azure.arm.caller.appid": "aaaaaaaa-0000-0000-0000-000000000000",
      "poolsync.event.id": "ev-1",
      "poolsync.event.type": "Microsoft.Resources.ResourceWriteSuccess",
      "poolsync.event.subject": VMSS,
    });
  });

  it("reads a raw event defensively: no field that is not short text, nothing at all from what is not an object", () => {
    expect(
      eventAttributes({
        type: "Microsoft.Resources.ResourceWriteSuccess",
        id: 7,
        data: { correlationId: "x".repeat(257) },
      }),
    ).toEqual({
      "poolsync.event.type": "Microsoft.Resources.ResourceWriteSuccess",
    });
    expect(eventAttributes("not an event")).toEqual({});
    expect(eventAttributes(null)).toEqual({});
  });

  it("counts a timer run that succeeded, when, and both queues' depth as Azurite tells it", async () => {
    const clock = manualClock(Date.parse("2026-12-02T10:00:00.500Z"));
    const q = queues();
    await Promise.all([q.queue.create(), q.poison.create()]);
    await q.queue.sendMessage("a");
    await q.queue.sendMessage("b");
    await q.poison.sendMessage("c");
    expect(await timedStaleRun(async () => "summary", q, clock)).toBe("summary");
    expect(total(await otel.points("poolsync.timer.runs"), { result: "success" })).toBe(1);
    expect(await gauge("poolsync.timer.last_success")).toEqual([Date.parse("2026-12-02T10:00:00Z") / 1000]);
    expect(await gauge("poolsync.queue.depth")).toEqual([2]);
    expect(await gauge("poolsync.queue.poison_depth")).toEqual([1]);
    await Promise.all([q.queue.delete(), q.poison.delete()]);
  });

  it("counts a failed run and rethrows it; a run whose depth read fails still succeeds", async () => {
    const q = queues(); // never created: reading its depth fails
    await expect(timedStaleRun(() => Promise.reject(new Error("table down")), q, manualClock())).rejects.toThrow(
      "table down",
    );
    expect(await gauge("poolsync.timer.last_success")).toEqual([]);
    expect(await timedStaleRun(async () => 7, q, manualClock())).toBe(7);
    const runs = await otel.points("poolsync.timer.runs");
    expect([total(runs, { result: "failure" }), total(runs, { result: "success" })]).toEqual([1, 1]);
    expect(await gauge("poolsync.queue.depth")).toEqual([]);
  });
});
