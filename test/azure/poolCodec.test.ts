import { describe, expect, it } from "vitest";
import { addressFromArm, ipBasedOf, poolAddressToArm, poolFromArm } from "../../src/azure/poolCodec";

const SUB = "00000000-aaaa-4bbb-8ccc-000000000456";
const NET = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network`;
const VNET = `${NET}/virtualNetworks/vnet`;
const POOL_ID = `${NET}/loadBalancers/lb/backendAddressPools/pool`;

describe("poolCodec", () => {
  it("reads an address alike flattened (an SDK GET) and under properties (a write's raw answer)", () => {
    const flat = addressFromArm({ name: "a", ipAddress: "10.0.0.4", virtualNetwork: { id: VNET } });
    const wire = addressFromArm({ name: "a", properties: { ipAddress: "10.0.0.4", virtualNetwork: { id: VNET } } });
    expect(wire).toEqual(flat);
    expect(flat).toEqual({ name: "a", ipAddress: "10.0.0.4", virtualNetworkId: VNET });
  });

  it("keeps the other writer's fields of an address and writes them back, but never NRP's read-only ones", () => {
    const read = addressFromArm({
      name: "a",
      properties: { ipAddress: "10.0.0.5", tag: "theirs", inboundNatRulesPortMapping: [{ port: 1 }], id: "x" },
    });
    expect(read.rest).toEqual({ tag: "theirs" });
    expect(poolAddressToArm(read)).toEqual({ tag: "theirs", name: "a", ipAddress: "10.0.0.5" });
  });

  it("tells a pool's kind from syncMode first, then from its members, and says nothing of an empty pool", () => {
    const ip = [{ name: "a", ipAddress: "10.0.0.4" }];
    expect(ipBasedOf({ syncMode: "Automatic" }, ip)).toBe(false);
    expect(ipBasedOf({ syncMode: "Manual" }, [])).toBe(true);
    expect(ipBasedOf({}, ip)).toBe(true);
    expect(ipBasedOf({ backendIPConfigurations: [{ id: "ipc" }] }, ip)).toBe(false);
    expect(ipBasedOf({}, [{ name: "n", ipAddress: "10.0.0.6", fromNic: true }])).toBe(false);
    expect(ipBasedOf({}, [])).toBeUndefined();
  });

  it("reads a pool with its load balancer's ETag, its addresses, and the fallback ID when ARM gave none", () => {
    const pool = poolFromArm(
      {
        etag: 'W/"7"',
        properties: {
          provisioningState: "Succeeded",
          loadBalancerBackendAddresses: [{ name: "a", properties: { ipAddress: "10.0.0.4" } }],
        },
      },
      POOL_ID,
    );
    expect(pool).toMatchObject({ id: POOL_ID, etag: 'W/"7"', provisioningState: "Succeeded", ipBased: true });
    expect(pool.addresses).toEqual([{ name: "a", ipAddress: "10.0.0.4" }]);
    expect(pool.pool).not.toHaveProperty("properties");
  });
});
