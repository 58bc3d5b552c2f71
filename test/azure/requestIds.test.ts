import { describe, expect, it } from "vitest";
import { RequestIds } from "../../src/azure/requestIds";

const SUB = "00000000-aaaa-4bbb-8ccc-000000000452";
const SCALE_SET = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-a`;
const OTHER = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-b`;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("RequestIds", () => {
  it("makes version-4 GUIDs that it recognises as its own for the resource written", () => {
    const ids = new RequestIds("app-key");
    const id = ids.next(SCALE_SET);
    expect(id).toMatch(GUID);
    expect(ids.ours(id, SCALE_SET)).toBe(true);
    expect(ids.next(SCALE_SET)).not.toBe(id);
  });

  it("recognises the ID whatever the event's letter case or trailing slash of the resource and the ID", () => {
    const ids = new RequestIds("app-key");
    const id = ids.next(SCALE_SET);
    expect(ids.ours(id.toUpperCase(), `${SCALE_SET.toLowerCase()}/`)).toBe(true);
  });

  it("refuses an ID copied onto another resource, made with another key, or altered", () => {
    const ids = new RequestIds("app-key");
    const id = ids.next(SCALE_SET);
    expect(ids.ours(id, OTHER)).toBe(false);
    expect(new RequestIds("other-key").ours(id, SCALE_SET)).toBe(false);
    const flipped = id.slice(0, -1) + (id.endsWith("0") ? "1" : "0");
    expect(ids.ours(flipped, SCALE_SET)).toBe(false);
  });

  it("refuses anyone else's request ID and a missing one", () => {
    const ids = new RequestIds("app-key");
    expect(ids.ours(undefined, SCALE_SET)).toBe(false);
    expect(ids.ours("not-a-guid", SCALE_SET)).toBe(false);
    expect(ids.ours("3f2504e0-4f89-41d3-9a0c-0305e82c3301", SCALE_SET)).toBe(false);
  });

  it("with no key, recognises only this instance's own IDs", () => {
    const a = new RequestIds("");
    const id = a.next(SCALE_SET);
    expect(a.ours(id, SCALE_SET)).toBe(true);
    expect(new RequestIds("").ours(id, SCALE_SET)).toBe(false);
  });
});
