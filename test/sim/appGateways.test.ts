// Application gateways: one resource with its own weak ETag, written whole by a long-running PUT, whose pools list
// backend addresses (IP or FQDN) and, derived, the ip configurations that reference them.
import type { NetworkManagementClient } from "@azure/arm-network";
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { simNetworkClient } from "../../sim/networkClient";
import { arm } from "./testkit";
import { AGW, AGW_EMPTY_POOL, AGW_POOL, RG, SUB, VM_NIC, WORLD } from "./poolKindsWorld";

const POLL = { updateIntervalInMs: 5 };
const WEAK = /^W\/"[0-9a-f-]{36}"$/;
const V = "?api-version=2024-07-01";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function start(opts: ArmSimulatorOptions = {}): Promise<{ sim: ArmSimulator; client: NetworkManagementClient }> {
  sim = await startArmSimulator({ seed: WORLD, ...opts });
  return { sim, client: simNetworkClient(sim, SUB) };
}

describe("an application gateway", () => {
  it("has its own weak ETag; its pools list addresses and the ip configurations that reference them", async () => {
    const { client } = await start();
    const agw = await client.applicationGateways.get(RG, "agw");
    expect(agw.etag).toMatch(WEAK);
    expect(agw.provisioningState).toBe("Succeeded");
    expect(agw.backendAddressPools?.map((p) => [p.name, p.id, p.backendAddresses, p.backendIPConfigurations])).toEqual([
      [
        "web",
        AGW_POOL,
        [{ ipAddress: "10.0.1.20" }, { fqdn: "app.example.com" }],
        [{ id: `${VM_NIC}/ipConfigurations/ipc` }],
      ],
      ["spare", AGW_EMPTY_POOL, [], undefined],
    ]);
  });

  it("a PUT is long-running (Azure-AsyncOperation, Updating until it ends) and moves the ETag; the event comes at the end", async () => {
    const { sim, client } = await start({ appGatewayWriteMs: 60_000 });
    const before = (await arm(sim.url, "GET", `${AGW}${V}`)).body;
    before.properties.backendAddressPools[1].properties.backendAddresses = [{ ipAddress: "10.0.1.21" }];
    const put = await arm(sim.url, "PUT", `${AGW}${V}`, { body: before, headers: { "if-match": before.etag } });
    expect(put.status).toBe(200);
    expect(put.body.properties.provisioningState).toBe("Updating");
    expect(put.headers.get("azure-asyncoperation")).toMatch(
      /\/providers\/Microsoft\.Network\/locations\/westeurope\/operations\//,
    );
    expect(put.headers.get("etag")).toBeNull();
    expect(put.body.etag).not.toBe(before.etag);
    expect(sim.control.events().filter((e) => e.subject === `${AGW}`)).toEqual([]);
    sim.control.clock.advance(60_000);
    const after = await client.applicationGateways.get(RG, "agw");
    expect(after.provisioningState).toBe("Succeeded");
    expect(after.backendAddressPools?.[1]?.backendAddresses).toEqual([{ ipAddress: "10.0.1.21" }]);
    expect(sim.control.events().at(-1)).toMatchObject({
      eventType: "Microsoft.Resources.ResourceWriteSuccess",
      subject: AGW,
      data: { operationName: "Microsoft.Network/applicationGateways/write" },
    });
  });

  it("an update PUT's own answer (200) lists every pool's addresses as sent, in order, as ApplicationGatewayCreate's example answers them", async () => {
    const { sim } = await start();
    const before = (await arm(sim.url, "GET", `${AGW}${V}`)).body;
    const sent = [{ ipAddress: "10.0.1.22" }, { fqdn: "b.example.com" }, { ipAddress: "10.0.1.20" }];
    before.properties.backendAddressPools[0].properties.backendAddresses = sent;
    const put = await arm(sim.url, "PUT", `${AGW}${V}`, { body: before, headers: { "if-match": before.etag } });
    expect(put.status).toBe(200);
    // The pool as the example answers one (name, id, properties with provisioningState and backendAddresses), with
    // the ip configurations that reference it still derived, and the other pool untouched.
    const [web, spare] = put.body.properties.backendAddressPools;
    expect(web).toMatchObject({ name: "web", id: AGW_POOL });
    expect(web.properties.backendAddresses).toEqual(sent);
    expect(web.properties.backendIPConfigurations).toEqual([{ id: `${VM_NIC}/ipConfigurations/ipc` }]);
    expect(spare.properties.backendAddresses).toEqual([]);
    sim.control.settle();
    const after = (await arm(sim.url, "GET", `${AGW}${V}`)).body;
    expect(after.etag).toBe(put.body.etag);
    expect(after.properties.backendAddressPools[0].properties.backendAddresses).toEqual(sent);
  });

  it("through the SDK's poller; a stale If-Match answers 412; a write while one runs answers 409", async () => {
    const { sim, client } = await start({ appGatewayWriteMs: 60_000, timeScale: 0.001 });
    const agw = await client.applicationGateways.get(RG, "agw");
    const first = client.applicationGateways.createOrUpdate(RG, "agw", agw, {
      requestOptions: { headers: { "if-match": agw.etag ?? "" } },
      ...POLL,
    });
    await first.submitted();
    const busy = await client.applicationGateways.createOrUpdate(RG, "agw", agw, POLL).catch((e: unknown) => e);
    expect(busy).toMatchObject({ statusCode: 409, code: "AnotherOperationInProgress" });
    sim.control.settle();
    expect((await first.pollUntilDone()).provisioningState).toBe("Succeeded");
    const stale = await client.applicationGateways
      .createOrUpdate(RG, "agw", agw, { requestOptions: { headers: { "if-match": agw.etag ?? "" } }, ...POLL })
      .catch((e: unknown) => e);
    expect(stale).toMatchObject({ statusCode: 412, code: "PreconditionFailed" });
  });

  it("refuses an address that is neither an IP nor an FQDN, naming the field", async () => {
    const { sim } = await start();
    const body = (await arm(sim.url, "GET", `${AGW}${V}`)).body;
    body.properties.backendAddressPools[0].properties.backendAddresses = ["10.0.1.1"];
    const put = await arm(sim.url, "PUT", `${AGW}${V}`, { body });
    expect([put.status, put.body.error.message]).toEqual([
      400,
      "properties.backendAddressPools[0].properties.backendAddresses[0] must be an object with ipAddress or fqdn.",
    ]);
  });

  it("NICs may join only a gateway pool that exists, and a pool in use cannot be dropped", async () => {
    const { sim, client } = await start();
    const nic = await client.networkInterfaces.get(RG, "vm-nic");
    const ipc = nic.ipConfigurations?.[0];
    if (ipc) ipc.applicationGatewayBackendAddressPools = [{ id: `${AGW}/backendAddressPools/nope` }];
    const joined = await client.networkInterfaces.createOrUpdate(RG, "vm-nic", nic, POLL).catch((e: unknown) => e);
    expect(joined).toMatchObject({ statusCode: 400, code: "InvalidResourceReference" });
    if (ipc) ipc.applicationGatewayBackendAddressPools = [{ id: AGW_EMPTY_POOL }];
    await client.networkInterfaces.createOrUpdate(RG, "vm-nic", nic, POLL);
    expect(sim.control.poolMembers(AGW_EMPTY_POOL)).toEqual([`${VM_NIC}/ipConfigurations/ipc`]);
    const body = (await arm(sim.url, "GET", `${AGW}${V}`)).body;
    body.properties.backendAddressPools = body.properties.backendAddressPools.slice(0, 1);
    const put = await arm(sim.url, "PUT", `${AGW}${V}`, { body });
    expect([put.status, put.body.error.code]).toEqual([
      400,
      "InUseApplicationGatewayBackendAddressPoolCannotBeDeleted",
    ]);
  });
});
