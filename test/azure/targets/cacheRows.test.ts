import { describe, expect, it } from "vitest";
import { CacheRowMac } from "../../../src/azure/cacheRowMac";
import { cacheEntity, decodeCacheRow, staleColumns } from "../../../src/azure/targets/cacheRows";
import { MAX_STRING_CHARS } from "../../../src/azure/modelCodec";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const mac = new CacheRowMac("cache-rows-key");
const ID =
  "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000465/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss";
const keys = { partitionKey: "p", rowKey: "c|i|3" };
const model = { instanceId: "3", nics: ["nic-0"] };

/** The entity as the Table hands it back: with its ETag. */
const asRead = (e: Record<string, unknown>) => ({ ...e, etag: 'W/"r"' });

describe("cacheRows", () => {
  it("reads back what it stored, vouched for by the scale set ETag it was listed under", () => {
    const problems: string[] = [];
    const row = asRead(cacheEntity(keys, "instance", ID, 'W/"a"', model, NOW, mac, { listedUnder: 'W/"s"' }));
    const entry = decodeCacheRow(row, mac, NOW, (_r, why) => problems.push(why));
    expect(entry).toMatchObject({ model, readAt: NOW, stale: false, rowEtag: 'W/"r"', listedUnder: 'W/"s"' });
    expect(problems).toEqual([]);
  });

  it("keeps a model stored in chunks readable, and refuses one whose chunks were swapped for another's", () => {
    const big = (c: string) => ({ blob: c.repeat(3 * MAX_STRING_CHARS) });
    const ours = asRead(cacheEntity(keys, "scaleSet", ID, "e", big("x"), NOW, mac));
    expect(decodeCacheRow(ours, mac, NOW).model).toEqual(big("x"));
    const theirs = cacheEntity(keys, "scaleSet", ID, "e", big("y"), NOW, new CacheRowMac("their-key"));
    expect(decodeCacheRow({ ...ours, model_0: theirs["model_0"] }, mac, NOW).model).toBeUndefined();
  });

  it("reads a row whose model someone changed, or another key signed, as a miss, saying why", () => {
    const problems: string[] = [];
    const row = asRead(cacheEntity(keys, "instance", ID, "e", model, NOW, mac, { listedUnder: "s" }));
    const planted = decodeCacheRow({ ...row, model: '{"instanceId":"3","nics":["theirs"]}' }, mac, NOW, (_r, w) =>
      problems.push(w),
    );
    expect(planted.model).toBeUndefined();
    expect(planted.listedUnder).toBeUndefined();
    expect(decodeCacheRow(row, new CacheRowMac("other-key"), NOW).model).toBeUndefined();
    expect(problems).toEqual([expect.stringMatching(/MAC does not verify/)]);
  });

  it("reads a row read 'in the future' as a miss: a planted readAt never keeps it fresh", () => {
    const row = asRead(cacheEntity(keys, "instance", ID, "e", model, NOW + 3_600_000, mac));
    expect(decodeCacheRow(row, mac, NOW).model).toBeUndefined();
  });

  it("marks a row stale with a bounded reason, its model kept for the next read", () => {
    const row = asRead({
      ...cacheEntity(keys, "instance", ID, "e", model, NOW, mac),
      ...staleColumns("y".repeat(2_000), NOW),
    });
    const entry = decodeCacheRow(row, mac, NOW);
    expect(entry).toMatchObject({ stale: true, model });
    expect(entry.staleReason).toHaveLength(1_024);
  });
});
