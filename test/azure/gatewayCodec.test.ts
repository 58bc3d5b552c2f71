import { describe, expect, it } from "vitest";
import { gatewayPoolFromArm, gatewayWithAddresses } from "../../src/azure/gatewayCodec";
import { NotFoundError } from "../../src/core/errors";

const SUB = "00000000-aaaa-4bbb-8ccc-000000000457";
const GW = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/applicationGateways/gw`;

const gateway = (pools: unknown[]) => ({
  id: GW,
  etag: 'W/"3"',
  properties: { provisioningState: "Succeeded", backendAddressPools: pools },
});

describe("gatewayCodec", () => {
  it("reads the named pool (any letter case) with the gateway's ETag, its IPs unnamed and an FQDN kept as read", () => {
    const gw = gateway([
      { name: "other", properties: { backendAddresses: [{ ipAddress: "10.9.9.9" }] } },
      {
        name: "Web",
        id: `${GW}/backendAddressPools/Web`,
        properties: { backendAddresses: [{ ipAddress: "10.0.0.4" }, { fqdn: "api.example" }] },
      },
    ]);
    const pool = gatewayPoolFromArm(gw, "web", "fallback");
    expect(pool).toMatchObject({
      id: `${GW}/backendAddressPools/Web`,
      etag: 'W/"3"',
      provisioningState: "Succeeded",
      ipBased: true,
    });
    expect(pool.addresses).toEqual([
      { name: "", ipAddress: "10.0.0.4" },
      { name: "", rest: { fqdn: "api.example" } },
    ]);
    expect(pool.gateway).toBe(gw);
  });

  it("reads a pool that ip configurations joined as NIC-based, one of FQDNs alone as address-based, an empty one as undecided", () => {
    const gw = gateway([
      { name: "nics", properties: { backendIPConfigurations: [{ id: "ipc" }], backendAddresses: [] } },
      { name: "empty", properties: {} },
      { name: "names", properties: { backendAddresses: [{ fqdn: "api.example" }] } },
    ]);
    expect(gatewayPoolFromArm(gw, "nics", "x").ipBased).toBe(false);
    expect(gatewayPoolFromArm(gw, "empty", "x").ipBased).toBeUndefined();
    expect(gatewayPoolFromArm(gw, "names", "x").ipBased).toBe(true);
  });

  it("refuses a pool the gateway does not have, naming the pool", () => {
    expect(() => gatewayPoolFromArm(gateway([]), "web", "x")).toThrow(NotFoundError);
    expect(() => gatewayPoolFromArm(gateway([]), "web", "x")).toThrow(/no backend pool web/);
  });

  it("writes the whole gateway back with only that pool's addresses replaced, FQDNs included", () => {
    const flat = {
      id: GW,
      sku: { name: "Standard_v2" },
      backendAddressPools: [
        { name: "web", backendAddresses: [{ ipAddress: "10.0.0.4" }] },
        { name: "other", backendAddresses: [{ ipAddress: "10.9.9.9" }] },
      ],
    };
    const out = gatewayWithAddresses(flat, "WEB", [
      { name: "vm-1", ipAddress: "10.0.0.5" },
      { name: "", rest: { fqdn: "api.example" } },
    ]);
    expect(out.sku).toEqual({ name: "Standard_v2" });
    expect(out.backendAddressPools).toEqual([
      { name: "web", backendAddresses: [{ ipAddress: "10.0.0.5" }, { fqdn: "api.example" }] },
      { name: "other", backendAddresses: [{ ipAddress: "10.9.9.9" }] },
    ]);
    expect(() => gatewayWithAddresses({ id: GW }, "web", [])).toThrow(/lists no backend pools/);
  });
});
