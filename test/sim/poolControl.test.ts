// The control API for pools of every kind, over HTTP (/_sim/): another writer changes a pool's addresses and admin
// state under the same 409 and 412 rules as the app, the interleaved writer acts on a pool, and any pool can be
// sampled at any moment.
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { arm } from "./testkit";
import { AGW, AGW_POOL, EMPTY_POOL, IP_POOL, NAT_POOL, NIC_POOL, VNET, WORLD } from "./poolKindsWorld";

const V = "?api-version=2024-07-01";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});
async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({ seed: WORLD, ...opts });
  return sim;
}

const control = async (s: ArmSimulator, method: string, path: string, body?: unknown) => {
  const r = await fetch(`${s.url}${path}`, { method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: r.status, body: (await r.json()) as any };
};
const state = (s: ArmSimulator, id: string) => control(s, "GET", `/_sim/pool-state?id=${encodeURIComponent(id)}`);

describe("GET /_sim/pool-state", () => {
  it("samples every pool kind: kind, ETag, members by reference, own addresses with admin state", async () => {
    const s = await start();
    const ip = await state(s, IP_POOL);
    expect(ip.body).toMatchObject({
      id: IP_POOL,
      kind: "loadBalancerBackendPool",
      poolKind: "ip",
      provisioningState: "Succeeded",
      running: [],
      ipConfigurations: [],
      addresses: [
        { name: "a1", ipAddress: "10.0.1.4", virtualNetwork: VNET },
        { name: "a2", ipAddress: "10.0.1.5", virtualNetwork: VNET, adminState: "Down" },
      ],
    });
    expect((await state(s, NIC_POOL)).body).toMatchObject({ poolKind: "nic", addresses: [] });
    expect((await state(s, NIC_POOL)).body.ipConfigurations).toHaveLength(2);
    expect((await state(s, EMPTY_POOL)).body).not.toHaveProperty("poolKind");
    expect((await state(s, NAT_POOL)).body).toMatchObject({ kind: "inboundNatPool" });
    expect((await state(s, AGW_POOL)).body).toMatchObject({
      kind: "applicationGatewayBackendPool",
      addresses: [{ ipAddress: "10.0.1.20" }, { fqdn: "app.example.com" }],
    });
    expect((await state(s, `${IP_POOL}-nope`)).status).toBe(404);
    expect((await control(s, "GET", `/_sim/pool-members?id=${encodeURIComponent(NAT_POOL)}`)).body.value).toHaveLength(
      2,
    );
  });
});

describe("POST /_sim/pool-addresses: another writer", () => {
  it("adds, removes and sets admin state with a pool PUT: a new ETag, an event with the other writer's claims", async () => {
    const s = await start();
    const before = (await state(s, IP_POOL)).body;
    const after = await control(s, "POST", "/_sim/pool-addresses", {
      id: IP_POOL,
      add: [{ name: "theirs", ipAddress: "10.0.1.40", virtualNetwork: VNET }],
      remove: ["a1"],
      adminState: { a2: "Up" },
      clientRequestId: "their-write",
    });
    expect(after.status).toBe(200);
    expect(after.body.etag).not.toBe(before.etag);
    expect(after.body.addresses.map((a: { name: string; adminState?: string }) => [a.name, a.adminState])).toEqual([
      ["a2", "Up"],
      ["theirs", undefined],
    ]);
    s.control.settle();
    const e = s.control.events().find((x) => x.data.httpRequest?.clientRequestId === "their-write");
    expect(e?.data).toMatchObject({
      operationName: "Microsoft.Network/loadBalancers/backendAddressPools/write",
      claims: { appid: "00000000-0000-0000-0000-0000000000e2" },
    });
  });

  it("meets the app's 409 while the app's write runs, and the app meets its; a stale ifMatch is NRP's 412", async () => {
    const s = await start({ loadBalancerWriteMs: 60_000 });
    const etag = (await state(s, IP_POOL)).body.etag;
    const app = await arm(s.url, "PUT", `${EMPTY_POOL}${V}`, { body: { properties: {} } });
    expect(app.status).toBe(200);
    const theirs = await control(s, "POST", "/_sim/pool-addresses", { id: IP_POOL, remove: ["a1"] });
    expect([theirs.status, theirs.body.error.code]).toEqual([409, "AnotherOperationInProgress"]);
    s.control.settle();
    const foreign = await control(s, "POST", "/_sim/pool-addresses", { id: IP_POOL, remove: ["a1"] });
    expect(foreign.status).toBe(200);
    const blocked = await arm(s.url, "PUT", `${IP_POOL}${V}`, { body: { properties: {} } });
    expect([blocked.status, blocked.body.error.code]).toEqual([409, "AnotherOperationInProgress"]);
    s.control.settle();
    const stale = await control(s, "POST", "/_sim/pool-addresses", { id: IP_POOL, remove: ["a2"], ifMatch: etag });
    expect([stale.status, stale.body.error.details[0].code]).toEqual([412, "PreconditionFailedEtagMismatch"]);
    expect((await state(s, IP_POOL)).body.addresses.map((a: { name: string }) => a.name)).toEqual(["a2"]);
  });

  it("changes a gateway pool's addresses with a PUT of the gateway", async () => {
    const s = await start();
    const before = (await arm(s.url, "GET", `${AGW}${V}`)).body.etag;
    const after = await control(s, "POST", "/_sim/pool-addresses", {
      id: AGW_POOL,
      add: [{ fqdn: "other.example.com" }],
      remove: ["10.0.1.20"],
    });
    expect(after.body.addresses).toEqual([{ fqdn: "app.example.com" }, { fqdn: "other.example.com" }]);
    expect(after.body.etag).not.toBe(before);
  });
});

describe("the interleaved writer on a pool", () => {
  it("changes the pool just before the app's write: If-Match meets 412, a write without it loses the change", async () => {
    const s = await start();
    const pool = (await arm(s.url, "GET", `${IP_POOL}${V}`)).body;
    await control(s, "POST", "/_sim/interleave", {
      id: IP_POOL,
      merge: { properties: { loadBalancerBackendAddresses: [] } },
      times: 2,
    });
    const conditional = await arm(s.url, "PUT", `${IP_POOL}${V}`, { body: pool, headers: { "if-match": pool.etag } });
    expect(conditional.status).toBe(412);
    expect((await state(s, IP_POOL)).body.addresses).toEqual([]);
    const blind = await arm(s.url, "PUT", `${IP_POOL}${V}`, { body: pool });
    expect(blind.status).toBe(200);
    // The other writer emptied the pool a second time; the app's unconditional write put its own list back over it.
    expect((await state(s, IP_POOL)).body.addresses.map((a: { name: string }) => a.name)).toEqual(["a1", "a2"]);
    expect(s.control.stats(IP_POOL).status412).toBe(1);
  });
});
