import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  recordArmRequest,
  recordDeclarationOutcome,
  recordMessageAge,
  recordThrottled,
} from "../../src/telemetry/metrics";
import { startInMemoryTelemetry, total } from "../support/otel";

let otel: ReturnType<typeof startInMemoryTelemetry>;
beforeEach(() => {
  otel = startInMemoryTelemetry();
});
afterEach(async () => {
  await otel.stop();
});

const GET_VMSS = { operation: "GET Microsoft.Compute/virtualMachineScaleSets", kind: "scaleSet" };

describe("metrics", () => {
  it("counts ARM requests by operation, HTTP status and kind, with their duration in seconds", async () => {
    recordArmRequest({ ...GET_VMSS, status: 200, durationMs: 250 });
    recordArmRequest({ ...GET_VMSS, status: 200, durationMs: 750 });
    const requests = await otel.points("poolsync.arm.requests");
    expect(total(requests, { ...GET_VMSS, status: 200 })).toBe(2);
    const [duration] = await otel.points("poolsync.arm.request.duration");
    expect(duration?.value).toMatchObject({ count: 2, sum: 1 });
    expect(await otel.points("poolsync.arm.precondition_failed")).toEqual([]);
  });

  it("counts a 412 as a precondition failure of its resource kind as well", async () => {
    recordArmRequest({
      operation: "PUT Microsoft.Network/networkInterfaces",
      kind: "nic",
      status: 412,
      durationMs: 10,
    });
    recordArmRequest({
      operation: "PUT Microsoft.Network/networkInterfaces",
      kind: "nic",
      status: 409,
      durationMs: 10,
    });
    expect(total(await otel.points("poolsync.arm.precondition_failed"), { kind: "nic" })).toBe(1);
    recordThrottled("concurrent-409", "UpdateVMScaleSetVM", "PUT x");
    expect(total(await otel.points("poolsync.arm.throttled"), { reason: "concurrent-409" })).toBe(1);
  });

  it("records convergence only for an outcome given its time to converge, and no negative ages", async () => {
    recordDeclarationOutcome("failed");
    recordDeclarationOutcome("applied", 4_000);
    recordDeclarationOutcome("applied", -1);
    recordMessageAge(-5, "reconcile");
    recordMessageAge(2_000, "reconcile");
    expect(total(await otel.points("poolsync.declarations"), { outcome: "applied" })).toBe(2);
    expect((await otel.points("poolsync.declaration.convergence"))[0]?.value).toMatchObject({ count: 1, sum: 4 });
    expect((await otel.points("poolsync.queue.message_age"))[0]?.value).toMatchObject({ count: 1, sum: 2 });
  });

  it("records into a meter provider registered after its first use (a new one per test here)", async () => {
    recordThrottled("429", "GetVMScaleSet3Min", "GET x");
    await otel.stop();
    otel = startInMemoryTelemetry();
    recordThrottled("429", "GetVMScaleSet3Min", "GET x");
    expect(total(await otel.points("poolsync.arm.throttled"), { bucket: "GetVMScaleSet3Min" })).toBe(1);
  });
});
