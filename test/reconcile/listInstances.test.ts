import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { InstanceModel } from "../../src/core/models";
import { instanceRef } from "../../src/core/resourceIds";
import { listAndStoreInstances } from "../../src/reconcile/listInstances";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/** One LIST of a scale set's instances stored as listed, and the rows it no longer shows evicted: simulator + Azurite. */
describe("listAndStoreInstances", () => {
  let h: Harness;
  const ref = scaleSetRef(DEMO.scaleSetId);
  const row = (id: string) => h.services.cache.readEntry(instanceRef(ref, id));
  beforeAll(async () => {
    h = await startHarness({ cacheEnabled: true });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    h.sim.control.reset({ seed: "demo" });
    await h.services.cache.evictScaleSet(ref);
    h.logs.lines.length = 0;
  });

  const list = async (writtenNext?: (inst: InstanceModel) => boolean) =>
    listAndStoreInstances(
      ref,
      await h.services.cache.readPartition(ref),
      "W/model-1",
      h.services.compute,
      { cache: h.services.cache, log: h.logs },
      writtenNext,
    );

  it("stores every listed instance under the model ETag read before the LIST", async () => {
    const listed = await list();
    expect(listed.map((i) => i.instanceId)).toEqual(["0", "1"]);
    for (const id of ["0", "1"])
      expect(await row(id)).toMatchObject({ stale: false, listedUnder: "W/model-1", model: { instanceId: id } });
  });

  it("leaves the instances about to be written to their write, and evicts a cached row the LIST no longer shows", async () => {
    const gone = (await list())[0]!;
    await h.services.cache.storeInstance(instanceRef(ref, "7"), { ...gone, instanceId: "7" }, undefined);
    await h.services.cache.evictInstance(instanceRef(ref, "1"));
    await list((inst) => inst.instanceId === "1");
    expect(await row("7")).toBeUndefined();
    expect(await row("1")).toBeUndefined();
    expect(await row("0")).toMatchObject({ listedUnder: "W/model-1" });
  });

  it("says so when an instance ID was reused by a new VM", async () => {
    const [first] = await list();
    await h.services.cache.storeInstance(
      instanceRef(ref, "0"),
      { ...first!, vmId: "an-older-vm" },
      (await row("0"))!.rowEtag,
    );
    await list();
    expect(h.logs.lines).toContainEqual(expect.objectContaining({ event: "instance.reborn", instanceIds: ["0"] }));
  });
});
