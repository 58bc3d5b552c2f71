// The simulator's answers held to the API specification's own examples (test/fixtures/azure/spec-examples, copied from
// Azure/azure-rest-api-specs): the example's request is sent as it is, and the answer must have the example answer's
// shape: its keys (NRP answers a few more: an ETag the example leaves out, empty collections), and the values the
// example makes a point of.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type SeedSpec } from "../../sim/index";
import { arm } from "./testkit";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const example = (file: string): Any =>
  JSON.parse(readFileSync(path.resolve(__dirname, "../fixtures/azure/spec-examples", file), "utf8")) as unknown;
const keys = (o: unknown): string[] => Object.keys(o as object).sort();
const V = "?api-version=2024-07-01";
const RG1 = "/subscriptions/subid/resourceGroups/rg1";
const TESTRG = "/subscriptions/subid/resourceGroups/testrg";

/** The examples' world: subscription "subid", the virtual networks they reference. */
const WORLD: SeedSpec = {
  subscriptions: [
    {
      id: "subid",
      resourceGroups: [
        {
          name: "rg1",
          location: "eastus",
          virtualNetworks: [
            {
              name: "vnetlb",
              addressPrefixes: ["10.0.0.0/16"],
              subnets: [{ name: "subnetlb", addressPrefix: "10.0.0.0/24" }],
            },
            {
              name: "lbvnet",
              addressPrefixes: ["10.0.0.0/16"],
              subnets: [{ name: "lbsubnet", addressPrefix: "10.0.1.0/24" }],
            },
            { name: "vnet", addressPrefixes: ["10.1.0.0/16"], subnets: [{ name: "appgwsubnet" }] },
          ],
        },
        { name: "testrg", location: "eastus" },
      ],
    },
  ],
};

let sim: ArmSimulator;
beforeAll(async () => {
  sim = await startArmSimulator({ loadBalancerWriteMs: 0, appGatewayWriteMs: 0 });
});
afterAll(async () => {
  await sim?.stop();
});
beforeEach(() => {
  sim.control.reset({ seed: WORLD });
});

describe("load balancer backend pools with addresses (LBBackendAddressPoolWithBackendAddressesPut/Get)", () => {
  const POOL = `${TESTRG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/backend`;
  /** The load balancer the examples assume: pool "backend" used by rule "rulelb". */
  const lbWithRule = () =>
    arm(sim.url, "PUT", `${TESTRG}/providers/Microsoft.Network/loadBalancers/lb${V}`, {
      body: {
        location: "eastus",
        properties: {
          backendAddressPools: [{ name: "backend" }],
          loadBalancingRules: [
            {
              name: "rulelb",
              properties: { backendAddressPool: { id: POOL }, protocol: "Tcp", frontendPort: 80, backendPort: 80 },
            },
          ],
        },
      },
    });

  it("PUT answers the example's shape: the addresses as written and the rule that uses the pool", async () => {
    expect((await lbWithRule()).status).toBe(201);
    const ex = example("lb-pool-put-with-backend-addresses.example.json");
    const put = await arm(sim.url, "PUT", `${POOL}${V}`, { body: ex.parameters.parameters });
    const want = ex.responses["200"].body;
    expect(put.status).toBe(200);
    expect(keys(put.body)).toEqual(keys(want));
    expect(keys(put.body.properties)).toEqual(keys(want.properties));
    expect({ ...put.body, etag: "", properties: { ...put.body.properties, provisioningState: "" } }).toEqual({
      ...want,
      etag: "",
      properties: { ...want.properties, provisioningState: "" },
    });
  });

  it("GET answers the example exactly, the weak ETag aside", async () => {
    await lbWithRule();
    const put = example("lb-pool-put-with-backend-addresses.example.json").parameters.parameters;
    await arm(sim.url, "PUT", `${POOL}${V}`, { body: put });
    sim.control.settle();
    const got = await arm(sim.url, "GET", `${POOL}${V}`);
    const want = example("lb-pool-get-with-backend-addresses.example.json").responses["200"].body;
    expect(got.body.etag).toMatch(/^W\/"[0-9a-f-]{36}"$/);
    expect({ ...got.body, etag: want.etag }).toEqual(want);
  });
});

describe("a load balancer with an inbound NAT pool (LoadBalancerCreateWithInboundNatPool)", () => {
  it("PUT creates it (201) in the example's shape, the NAT pool and its frontend as the example shows them", async () => {
    const ex = example("lb-create-with-inbound-nat-pool.example.json");
    const put = await arm(sim.url, "PUT", `${RG1}/providers/Microsoft.Network/loadBalancers/lb${V}`, {
      body: ex.parameters.parameters,
    });
    const want = ex.responses["201"].body;
    expect(put.status).toBe(201);
    expect(keys(put.body)).toEqual(keys(want));
    expect(keys(put.body.properties)).toEqual(keys(want.properties));
    const nat = put.body.properties.inboundNatPools[0];
    const wantNat = want.properties.inboundNatPools[0];
    expect({ ...nat, etag: wantNat.etag }).toEqual(wantNat);
    const fe = put.body.properties.frontendIPConfigurations[0];
    const wantFe = want.properties.frontendIPConfigurations[0];
    expect(keys(wantFe).every((k) => k in fe)).toBe(true);
    expect(fe.properties).toEqual(wantFe.properties);
    expect(put.body.properties.inboundNatRules).toEqual([]);
  });
});

describe("an application gateway (ApplicationGatewayCreate/Get)", () => {
  const AGW = `${RG1}/providers/Microsoft.Network/applicationGateways/appgw`;

  it("PUT creates it (201) with every key the example answers, its pools as the example shows them", async () => {
    const ex = example("agw-create.example.json");
    const put = await arm(sim.url, "PUT", `${AGW}${V}`, { body: ex.parameters.parameters });
    const want = ex.responses["201"].body;
    expect(put.status).toBe(201);
    // The example leaves out the etag every Network resource has (the definition's read-only etag) and the identity.
    expect(keys(put.body).filter((k) => !(k in want))).toEqual(["etag", "identity"]);
    expect(keys(want).filter((k) => !(k in put.body))).toEqual([]);
    expect(keys(want.properties).filter((k) => !(k in put.body.properties))).toEqual([]);
    const pools = put.body.properties.backendAddressPools;
    (want.properties.backendAddressPools as Any[]).forEach((w, i) => {
      expect(keys(w).filter((k) => !(k in pools[i]))).toEqual([]);
      expect(pools[i].properties.backendAddresses).toEqual(w.properties.backendAddresses);
      expect(pools[i].id).toBe(w.id);
    });
  });

  it("GET answers every key of the example's gateway and of its pools", async () => {
    await arm(sim.url, "PUT", `${AGW}${V}`, { body: example("agw-create.example.json").parameters.parameters });
    sim.control.settle();
    const got = (await arm(sim.url, "GET", `${AGW}${V}`)).body;
    const want = example("agw-get.example.json").responses["200"].body;
    expect(keys(want).filter((k) => !(k in got))).toEqual([]);
    expect(got.properties.provisioningState).toBe(want.properties.provisioningState);
    expect(
      keys(want.properties.backendAddressPools[0]).filter((k) => !(k in got.properties.backendAddressPools[0])),
    ).toEqual([]);
  });
});

describe("a scale set instance's NIC (VmssNetworkInterfaceGet)", () => {
  /** The example's world: scale set vmss1 whose instance 1 has NIC nic1, ip configuration ip1 in vnet1/subnet1, in
   *  load balancer lb1's pool addressPool1 and NAT pool natPool1. */
  const VMSS_WORLD: SeedSpec = {
    subscriptions: [
      {
        id: "subid",
        resourceGroups: [
          {
            name: "rg1",
            location: "eastus",
            virtualNetworks: [
              {
                name: "vnet1",
                addressPrefixes: ["10.0.0.0/16"],
                subnets: [{ name: "subnet1", addressPrefix: "10.0.0.0/24" }],
              },
            ],
            loadBalancers: [
              {
                name: "lb1",
                backendPools: ["addressPool1"],
                inboundNatPools: [
                  { name: "natPool1", frontendPortRangeStart: 50000, frontendPortRangeEnd: 50099, backendPort: 22 },
                ],
              },
            ],
            scaleSets: [
              {
                name: "vmss1",
                capacity: 2,
                nics: [
                  {
                    name: "nic1",
                    primary: true,
                    ipConfigurations: [
                      {
                        name: "ip1",
                        primary: true,
                        subnet: "vnet1/subnet1",
                        backendPools: ["lb1/addressPool1"],
                        inboundNatPools: ["lb1/natPool1"],
                      },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    ],
  };

  it("GET answers the example's keys, IDs and references (the NAT rule NRP derived, not the NAT pool)", async () => {
    sim.control.reset({ seed: VMSS_WORLD });
    const NIC = `${RG1}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss1/virtualMachines/1/networkInterfaces/nic1`;
    const got = await arm(sim.url, "GET", `${NIC}?api-version=2018-10-01`);
    const want = example("vmss-nic-get.example.json").responses["200"].body;
    expect(got.status).toBe(200);
    expect(keys(got.body)).toEqual(keys(want));
    expect(got.body.id).toBe(want.id);
    // The example's NIC has a network security group; this scale set's has none.
    expect(keys(got.body.properties)).toEqual(keys(want.properties).filter((k) => k !== "networkSecurityGroup"));
    expect(got.body.properties.virtualMachine).toEqual(want.properties.virtualMachine);
    expect(got.body.properties.macAddress).toMatch(/^([0-9A-F]{2}-){5}[0-9A-F]{2}$/);
    const ipc = got.body.properties.ipConfigurations[0];
    const wantIpc = want.properties.ipConfigurations[0];
    expect(keys(ipc)).toEqual(keys(wantIpc));
    expect(ipc.id).toBe(wantIpc.id);
    // The example's ip configuration has a public address; this one has none.
    expect(keys(ipc.properties)).toEqual(keys(wantIpc.properties).filter((k) => k !== "publicIPAddress"));
    expect({ ...ipc.properties, privateIPAddress: "" }).toEqual({
      ...wantIpc.properties,
      privateIPAddress: "",
      publicIPAddress: undefined,
    });
  });
});
