import { describe, expect, it } from "vitest";
import {
  declarationKey,
  fromIpSelectorText,
  ipSelectorText,
  toIntent,
  type Declaration,
} from "../../src/core/declarations";

const POOL =
  "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/be";
const base: Declaration = {
  scaleSetId:
    "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss",
  backendPoolId: POOL,
  ipConfiguration: "",
  state: "present",
  declaredAt: "2026-12-04T10:00:00.000Z",
  requestId: "r-1",
  declaredBy: { id: "queue", name: "queue", via: "queue" },
};

describe("the IP version is a field of the declaration, stored as the text earlier versions wrote", () => {
  it("reads a row of the previous version ('@IPv6', 'nic/@IPv6') into the field, and a name as a name", () => {
    expect(fromIpSelectorText("@IPv6")).toEqual({ ipConfiguration: "", ipVersion: "IPv6" });
    expect(fromIpSelectorText("nic-1/@IPv4")).toEqual({ ipConfiguration: "nic-1", ipVersion: "IPv4" });
    expect(fromIpSelectorText("nic-1/ipconfig2")).toEqual({ ipConfiguration: "nic-1/ipconfig2" });
    expect(fromIpSelectorText("")).toEqual({ ipConfiguration: "" });
  });

  it("writes the same text and the same row key as before, so stored declarations keep their identity", () => {
    const v6 = { ...base, ipVersion: "IPv6" as const };
    expect(ipSelectorText(v6)).toBe("@IPv6");
    expect(declarationKey(v6)).toBe(`${POOL.toLowerCase()}|@ipv6`);
    expect(ipSelectorText({ ipConfiguration: "nic-1", ipVersion: "IPv4" })).toBe("nic-1/@IPv4");
    expect(toIntent(v6).selector).toEqual({ kind: "version", version: "IPv6" });
    expect(toIntent({ ...base, ipConfiguration: "ipconfig1" }).selector).toEqual({
      kind: "named",
      ipConfiguration: "ipconfig1",
    });
  });
});
