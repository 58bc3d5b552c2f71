import { TableClient } from "@azure/data-tables";
import { beforeEach, describe, expect, it } from "vitest";
import { DeclareWindowTable } from "../../src/azure/declareWindowTable";
import { EtagCacheTable } from "../../src/azure/etagCacheTable";
import { ProblemLogTable } from "../../src/azure/problemLogTable";
import { TimerStateTable } from "../../src/azure/timerStateTable";
import type { ScaleSetModel } from "../../src/core/models";
import { instanceRef } from "../../src/core/resourceIds";
import { encodeKey } from "../../src/core/tableKeys";
import { scaleSetRef } from "../support/refs";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/**
 * The cache table holds four stores, each owning its rows: the model cache, the declare windows, the problem
 * log and the timer's state. Evicting a scale set drops its rows in every store that keeps some, and nothing
 * of any other scale set or of the timer.
 */

const SUB = "00000000-1111-2222-3333-444444444444";
const gone = scaleSetRef(
  `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/gone`,
);
const kept = scaleSetRef(
  `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/kept`,
);
const model = (id: string): ScaleSetModel => ({
  id,
  location: "westeurope",
  etag: '"1"',
  provisioningState: "Succeeded",
  capacity: 1,
  nics: [],
});

let table: TableClient;
let windows: DeclareWindowTable;
let problems: ProblemLogTable;
let timer: TimerStateTable;
const now = () => 1_000_000;
const WINDOW = { windowMs: 60_000, joinableMs: 60_000, quietMs: 120_000 };

beforeEach(async () => {
  table = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("cache"), {
    allowInsecureConnection: true,
  });
  await table.createTable();
  windows = new DeclareWindowTable(table, now);
  problems = new ProblemLogTable(table);
  timer = new TimerStateTable(table);
});

async function seed(cache: EtagCacheTable): Promise<void> {
  for (const ref of [gone, kept]) {
    await cache.storeScaleSet(ref, model(ref.id), undefined);
    await cache.markStale(instanceRef(ref, "0"), "test");
    await windows.claim(ref, `claimant of ${ref.id}`, WINDOW);
    await problems.record(ref, {
      scaleSetId: ref.id,
      at: "2026-01-01T00:00:00.000Z",
      result: "requeued",
      preconditionFailures: 0,
      throttles: 1,
      reason: "test",
    });
  }
  await timer.write({ notBefore: 5, cursor: kept.key });
}

async function rows(): Promise<string[]> {
  const out: string[] = [];
  for await (const r of table.listEntities()) out.push(`${r.partitionKey}|${r.rowKey}`);
  return out.sort();
}

describe("evictScaleSet asks each owner", () => {
  for (const enabled of [true, false]) {
    it(`drops the scale set's cache rows, window and problem, and nothing else (cache ${enabled ? "on" : "off"})`, async () => {
      const cache = new EtagCacheTable(table, true, now, [problems, windows]);
      await seed(cache);
      const before = await rows();
      await new EtagCacheTable(table, enabled, now, [problems, windows]).evictScaleSet(gone);

      const after = await rows();
      const removed = before.filter((r) => !after.includes(r));
      // Windows and problems go even with the cache off: they are not cached models.
      expect(removed.filter((r) => r.startsWith("~"))).toHaveLength(2);
      expect(removed.filter((r) => !r.startsWith("~"))).toHaveLength(enabled ? 2 : 0);
      expect((await problems.list()).map((p) => p.scaleSetId)).toEqual([kept.id]);
      // The kept scale set's window row is still there (its claim was recent: a new one opens a window behind it); the
      // gone one's was forgotten, so the scale set is quiet again.
      expect(await windows.claim(kept, "someone else", WINDOW)).toBe("opened");
      expect(await windows.claim(gone, "someone else", WINDOW)).toBe("leading");
      expect(await timer.read()).toEqual({ notBefore: 5, cursor: kept.key });
      expect((await cache.readPartition(kept)).scaleSet?.model?.id).toBe(kept.id);
    });
  }

  it("a missing row is already evicted", async () => {
    await expect(
      new EtagCacheTable(table, true, now, [problems, windows]).evictScaleSet(gone),
    ).resolves.toBeUndefined();
    expect(await timer.read()).toEqual({ notBefore: 0, cursor: "" });
  });
});

describe("a row whose model cannot be read", () => {
  it("is a miss (re-read from ARM), and says so once per read with the row and the reason", async () => {
    const told: Array<{ rowKey: string; resourceId: string; reason: string }> = [];
    const cache = new EtagCacheTable(table, true, now, [], (row, reason) =>
      told.push({ rowKey: row.rowKey, resourceId: row.resourceId, reason }),
    );
    await cache.storeScaleSet(kept, model(kept.id), undefined);
    await cache.storeScaleSet(gone, model(gone.id), undefined);
    // Someone (an older version, a hand edit) left a model that is not JSON in one row.
    const [pk, rk] = [encodeKey(gone.key), "vmss"];
    await table.updateEntity({ partitionKey: pk, rowKey: rk, model: "{not json", modelChunks: 0 }, "Merge");

    expect((await cache.readPartition(gone)).scaleSet?.model).toBeUndefined();
    expect((await cache.readPartition(kept)).scaleSet?.model?.id).toBe(kept.id);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ rowKey: "vmss", resourceId: gone.id });
    // Its MAC no longer covers what it holds: refused before it is even parsed.
    expect(told[0]?.reason).toMatch(/MAC does not verify/);
  });
});

describe("EtagCacheTable.listGroupRows", () => {
  it("answers the scale set rows of one resource group only: not rg-10's for rg-1, no instance, VM or bookkeeping row", async () => {
    const cache = new EtagCacheTable(table, true, now);
    const at = (rg: string, name: string) =>
      scaleSetRef(
        `/subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`,
      );
    const mine = [at("rg-1", "a"), at("RG-1", "B")];
    for (const ref of [...mine, at("rg-10", "c"), at("rg-", "d"), at("rg-1a", "e")]) {
      await cache.storeScaleSet(ref, model(ref.id), undefined);
      await cache.markStale(instanceRef(ref, "0"), "test");
      await windows.claim(ref, "claimant", WINDOW);
    }
    await cache.markStale(mine[1]!, "test: an event");
    await cache.beginWrite(mine[0]!, "our-write");

    const found = await cache.listGroupRows({ subscriptionId: SUB, resourceGroup: "Rg-1" });
    // Both stale now: b by an event, a by our write in flight, which says so.
    expect(found.map((r) => [r.scaleSetKey, r.stale, r.writing]).sort()).toEqual(
      mine.map((r) => [r.key, true, r.key.endsWith("/a")]).sort(),
    );
    expect(found.every((r) => r.rowEtag.length > 0 && r.readAt === now())).toBe(true);
  });
});
