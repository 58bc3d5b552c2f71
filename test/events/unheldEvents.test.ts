import { afterEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { eventGridEvent } from "../support/armEventSamples";
import { scaleSetRef } from "../support/refs";
import { DEMO_SUBSCRIPTION } from "../../sim/seed";
import { UNHELD_KEPT } from "../../src/azure/unheldEventTable";

/**
 * Issue 26: anyone who can reach the webhook can send an event for a made-up resource ID. One for something poolsync
 * holds nothing for (no declaration, no cache row) used to leave a stale row per ID, without bound; it is now only
 * counted, in one fixed-size row that the status shows (and `npm run smoke` reads).
 */

const forgedScaleSet = (i: number) =>
  `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/made-up-${i}`;

/** Every row of both tables (the targets table and the shared one), by key. */
async function cacheRows(h: Harness): Promise<string[]> {
  const keys: string[] = [];
  for (const table of [h.services.store.table, h.services.unheld.table])
    for await (const row of table.listEntities({ queryOptions: { select: ["PartitionKey", "RowKey"] } }))
      keys.push(`${row.partitionKey}|${row.rowKey}`);
  return keys;
}

describe("events about resources poolsync holds nothing for (Azurite)", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  it("make no cache row, however many made-up IDs; they are counted in one row the status shows", async () => {
    h = await startHarness({ cacheEnabled: true, env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "0" } });
    const before = await cacheRows(h);
    const sent = 30;
    for (let i = 0; i < sent; i++) {
      const id = i % 2 === 0 ? forgedScaleSet(i) : `${forgedScaleSet(i)}/virtualMachines/${i}`;
      const operationName =
        i % 2 === 0
          ? "Microsoft.Compute/virtualMachineScaleSets/write"
          : "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write";
      expect(
        await h.services.handleResourceEvent(eventGridEvent({ id: `forged-${i}`, resourceUri: id, operationName })),
      ).toBe("unheld");
    }
    // One row (the tally) and nothing else, whatever the number of IDs.
    const after = (await cacheRows(h)).filter((k) => !before.includes(k));
    expect(after).toEqual(["~events|unheld"]);

    const summary = await h.services.unheld.summary();
    expect(summary.count).toBe(sent);
    expect(summary.recent).toHaveLength(UNHELD_KEPT);
    expect(summary.recent[0]?.resourceId).toBe(`${forgedScaleSet(sent - 1)}/virtualMachines/${sent - 1}`);
    expect(summary.recent[0]?.reason).toMatch(/^event forged-29 ResourceWriteSuccess/);
  });

  it("still invalidate what poolsync holds: a cached scale set nobody declares, a declared one with no row yet", async () => {
    h = await startHarness({ cacheEnabled: true, env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "0" } });
    const vmss = scaleSetRef(DEMO.scaleSetId);
    await h.services.cache.storeScaleSet(vmss, await h.services.compute.getScaleSet(vmss), undefined);
    const write = (id: string) =>
      eventGridEvent({
        id,
        resourceUri: DEMO.scaleSetId,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      });
    expect(await h.services.handleResourceEvent(write("cached"))).toBe("invalidated");
    expect((await h.services.cache.readPartition(vmss)).scaleSet?.stale).toBe(true);

    // Declared, its row gone: the marker is still made (a concurrent first read must not store over it).
    await h.services.cache.evictScaleSet(vmss);
    await h.services.declarations.upsert(vmss, {
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      state: "present",
      declaredAt: new Date().toISOString(),
      requestId: "r1",
      declaredBy: { id: "t", name: "t", via: "key" },
    });
    expect(await h.services.handleResourceEvent(write("declared"))).toBe("invalidated+reconcile");
    expect((await h.services.cache.readPartition(vmss)).scaleSet?.stale).toBe(true);
    expect((await h.services.unheld.summary()).count).toBe(0);
  });
});
