import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  BeingDeletedError,
  NotFoundError,
  PreconditionFailedError,
  ThrottledError,
  TransientError,
} from "../../src/core/errors";
import type { NicConfiguration } from "../../src/core/networkProfile";
import { instanceRef } from "../../src/core/resourceIds";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * The Compute edge over the real @azure/arm-compute client against the simulator: what it reads, the sparse
 * If-Match write it sends with our client request id, and the typed error of each answer class.
 */

let h: Harness;
const ref = scaleSetRef(DEMO.scaleSetId);
const pool = DEMO.poolId.toLowerCase();

/** The model's NICs with the demo pool on the primary ip configuration. */
function withPool(nics: NicConfiguration[]): NicConfiguration[] {
  const copy = structuredClone(nics) as Array<{
    ipConfigurations?: Array<{ loadBalancerBackendAddressPools?: Array<{ id: string }> }>;
  }>;
  copy[0]!.ipConfigurations![0]!.loadBalancerBackendAddressPools = [{ id: DEMO.poolId }];
  return copy as NicConfiguration[];
}

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});
beforeEach(() => {
  h.sim.control.reset({ seed: "demo" });
});

describe("ArmCompute", () => {
  it("reads the scale set and its instances, each with its own ETag", async () => {
    const model = await h.services.compute.getScaleSet(ref);
    expect(model).toMatchObject({ capacity: 2, provisioningState: "Succeeded" });
    expect(model.etag).not.toBe("");
    expect(model.nics).toHaveLength(1);
    const instances = await h.services.compute.listInstances(ref);
    expect(instances.map((i) => i.instanceId)).toEqual(["0", "1"]);
    expect(instances.every((i) => i.etag !== "")).toBe(true);
    expect(await h.services.compute.getInstance(instanceRef(ref, "1"))).toMatchObject({
      instanceId: "1",
      etag: instances[1]!.etag,
    });
  });

  it("writes only the NICs, with If-Match and our client request id, and answers the new ETag", async () => {
    const model = await h.services.compute.getScaleSet(ref);
    // A stale capacity in what we hold must never be written back: the PUT carries location and NICs only.
    const after = await h.services.compute.writeScaleSetNics(ref, { ...model, capacity: 7 }, withPool(model.nics), {
      ifMatch: model.etag,
      clientRequestId: "test-write-1",
    });
    expect(after.etag).not.toBe(model.etag);
    const stored = h.sim.control.resource(DEMO.scaleSetId)!;
    expect(stored.etag).toBe(after.etag);
    expect((stored.sku as { capacity: number }).capacity).toBe(2);
    expect(poolsByIpConfig(modelNics(stored))).toEqual({ ipConfig0: [pool] });
    const written = h.sim.control.events().filter((e) => e.data.httpRequest?.method === "PUT");
    expect(written.map((e) => e.data.httpRequest?.clientRequestId)).toContain("test-write-1");
  });

  it("a stale ETag is a precondition failure, and nothing is written", async () => {
    const model = await h.services.compute.getScaleSet(ref);
    h.sim.control.write(DEMO.scaleSetId, (r) => void ((r as { tags?: unknown }).tags = { other: "writer" }));
    const write = h.services.compute.writeScaleSetNics(ref, model, withPool(model.nics), {
      ifMatch: model.etag,
      clientRequestId: "stale",
    });
    await expect(write).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(DEMO.scaleSetId)!))).toEqual({ ipConfig0: [] });
  });

  it("a throttled write is ThrottledError with ARM's Retry-After", async () => {
    const model = await h.services.compute.getScaleSet(ref);
    h.sim.control.injectFault({ method: "PUT", path: "virtualMachineScaleSets/[^/]+$", retryAfterSeconds: 42 });
    const err = await h.services.compute
      .writeScaleSetNics(ref, model, withPool(model.nics), { ifMatch: model.etag, clientRequestId: "t" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottledError);
    expect((err as ThrottledError).retryAfterMs).toBe(42_000);
  });

  it("a 500 is transient; a missing scale set is not found", async () => {
    h.sim.control.injectFault({ method: "GET", path: "virtualMachineScaleSets/[^/]+$", status: 500 });
    await expect(h.services.compute.getScaleSet(ref)).rejects.toBeInstanceOf(TransientError);
    const missing = scaleSetRef(DEMO.scaleSetId.replace(/etag-k8s-mp-0$/, "nope"));
    await expect(h.services.compute.getScaleSet(missing)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("never sends a write to a scale set that is being deleted", async () => {
    const model = await h.services.compute.getScaleSet(ref);
    h.sim.control.resetStats();
    const write = h.services.compute.writeScaleSetNics(
      ref,
      { ...model, provisioningState: "Deleting" },
      withPool(model.nics),
      {
        ifMatch: model.etag,
        clientRequestId: "d",
      },
    );
    await expect(write).rejects.toBeInstanceOf(BeingDeletedError);
    expect(h.sim.control.stats().puts).toBe(0);
  });

  it("writes one instance's NICs with its own ETag", async () => {
    const iref = instanceRef(ref, "0");
    const vm = await h.services.compute.getInstance(iref);
    await h.services.compute.writeInstanceNics(iref, vm, withPool(vm.nics), {
      ifMatch: vm.etag,
      clientRequestId: "vm-0",
    });
    const reread = await h.services.compute.getInstance(iref);
    expect(reread.etag).not.toBe(vm.etag);
    expect(h.sim.control.instances(DEMO.scaleSetId).map((i) => poolsByIpConfig(instanceNics(i)))).toEqual([
      { ipConfig0: [pool] },
      { ipConfig0: [] },
    ]);
    expect((await h.services.compute.getInstance(instanceRef(ref, "1"))).etag).toBe(vm.etag);
    const again = h.services.compute.writeInstanceNics(iref, vm, vm.nics, {
      ifMatch: vm.etag,
      clientRequestId: "vm-0-stale",
    });
    await expect(again).rejects.toBeInstanceOf(PreconditionFailedError);
  });
});
