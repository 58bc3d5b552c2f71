import { describe, expect, it } from "vitest";
import { CacheRowMac, type MacFields } from "../../src/azure/cacheRowMac";

const SUB = "00000000-aaaa-4bbb-8ccc-000000000455";
const row: MacFields = {
  partitionKey: "target-1",
  rowKey: "model~nic-0",
  resourceId: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/nic-0`,
  armEtag: 'W/"1"',
  listedUnder: "",
  model: '{"ipConfigurations":[]}',
  chunks: [],
};

describe("CacheRowMac", () => {
  it("verifies a row it signed, whatever the letter case of its resource ID", () => {
    const mac = new CacheRowMac("cache-key");
    const signed = mac.sign(row);
    expect(mac.verify(row, signed)).toBe(true);
    expect(mac.verify({ ...row, resourceId: row.resourceId.toUpperCase() }, signed)).toBe(true);
  });

  it("refuses a row whose model, ETag, keys or chunks someone else changed", () => {
    const mac = new CacheRowMac("cache-key");
    const signed = mac.sign(row);
    expect(mac.verify({ ...row, model: '{"ipConfigurations":[{"id":"planted"}]}' }, signed)).toBe(false);
    expect(mac.verify({ ...row, armEtag: 'W/"2"' }, signed)).toBe(false);
    expect(mac.verify({ ...row, rowKey: "model~nic-1" }, signed)).toBe(false);
    expect(mac.verify({ ...row, chunks: [new Uint8Array([1])] }, signed)).toBe(false);
    const chunked = { ...row, model: "", chunks: [new Uint8Array([1, 2]), new Uint8Array([3])] };
    const chunkedMac = mac.sign(chunked);
    expect(mac.verify({ ...chunked, chunks: [new Uint8Array([1, 2]), new Uint8Array([4])] }, chunkedMac)).toBe(false);
  });

  it("tells fields apart by their lengths: a character moved from one field to the next changes the MAC", () => {
    const mac = new CacheRowMac("cache-key");
    const a = mac.sign({ ...row, partitionKey: "ab", rowKey: "c" });
    expect(mac.verify({ ...row, partitionKey: "a", rowKey: "bc" }, a)).toBe(false);
  });

  it("refuses a MAC made with another key, and a row with none", () => {
    const signed = new CacheRowMac("other-key").sign(row);
    const mac = new CacheRowMac("cache-key");
    expect(mac.verify(row, signed)).toBe(false);
    expect(mac.verify(row, undefined)).toBe(false);
    expect(mac.verify(row, "")).toBe(false);
  });
});
