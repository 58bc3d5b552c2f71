// poolsync's own requests, through its real SDK clients and the whole reconcile, held against Azure's OpenAPI
// definitions (test/fixtures/azure/openapi): every body poolsync sends and every answer it reads fits them.
import { afterEach, describe, expect, it } from "vitest";
import { azureSpecs } from "../support/azureSpecs";
import { DEMO, startHarness, type Harness } from "../support/harness";

const RG = `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers`;
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const VM = `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;

describe("poolsync's traffic against Azure's API definitions", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("declares and withdraws pools on a Uniform and a Flexible scale set and a VM: no request or answer the definitions refuse", async () => {
    h = await startHarness({ sim: { specConformance: azureSpecs() } });
    const declare = (extra: Record<string, unknown>, state: "present" | "absent") =>
      h!.send({ v: 1, kind: "declare", backendPoolId: DEMO.poolId, state, ...extra });
    for (const state of ["present", "absent"] as const) {
      await declare({ scaleSetId: DEMO.scaleSetId }, state);
      await declare({ targetId: FLEX }, state);
      await declare({ targetId: VM }, state);
      await h.drainUntilEmpty(60_000);
      h.sim.control.settle();
    }
    // The timer's sweep reads what the reconciles wrote.
    await h.services.reconcileStale();
    const record = h.sim.control.specRecord()!;
    expect(record.violations).toEqual([]);
    // Model, instance and NIC writes were all checked, the requests' bodies with them.
    const stats = h.sim.control.stats();
    expect(stats.puts + stats.patches).toBeGreaterThan(0);
    expect(stats.instancePuts).toBeGreaterThan(0);
    expect(stats.nicPuts).toBeGreaterThan(0);
    expect(record.checked).toBeGreaterThan(stats.puts + stats.patches + stats.instancePuts + stats.nicPuts);
  });
});
