import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import type { JsonObject } from "../../sim";
import { KINDS, KINDS_RG, KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import { simNetworkClient } from "../../sim/networkClient";
import { POOL_ACTIONS } from "../../src/azure/armPermissions";
import { startHarness, type Harness } from "../support/harness";

/**
 * Application Gateway pools that list addresses (issue 43) through the real edges: Azurite, the simulator, the real
 * Network SDK. poolsync puts the members' private IPs into the pool's `backendAddresses` with a PUT of the whole
 * gateway, If-Match on the gateway's ETag, and keeps a record of what it added (a gateway's addresses have no names):
 * another writer's addresses, the same IPs among them, survive every write, and an absent takes out only ours.
 */

const POOL = KINDS.addressGatewayPool;
const FOREIGN = ["10.1.250.9"];
const FQDN = "legacy.example.test";

const target = (id: string): TargetRef => {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};
let seq = 0;
function declaration(targetId: string, state: "present" | "absent", backendPoolId = POOL) {
  return {
    scaleSetId: targetId,
    backendPoolId,
    ipConfiguration: "",
    state,
    declaredAt: new Date(Date.now() + seq).toISOString(),
    requestId: `g${++seq}`,
    declaredBy: QUEUE_DECLARER,
  } satisfies Declaration;
}

const addresses = (h: Harness) => h.sim.control.poolState(POOL)?.addresses ?? [];
const ips = (h: Harness) => addresses(h).flatMap((a) => (a.ipAddress !== undefined ? [a.ipAddress] : []));
const sorted = (list: readonly string[]) => [...list].sort();

/** The private IPs of a target's members, as Network RP lists their NICs (the SDK over HTTP). */
async function memberIps(h: Harness, targetId: string): Promise<string[]> {
  const t = target(targetId);
  const client = simNetworkClient(h.sim, KINDS_SUBSCRIPTION);
  const nics = [];
  if (t.kind === "vm") nics.push(await client.networkInterfaces.get(KINDS_RG, `${t.name}-nic`));
  else
    for await (const nic of client.networkInterfaces.listVirtualMachineScaleSetNetworkInterfaces(KINDS_RG, t.name))
      nics.push(nic);
  return sorted(nics.flatMap((n) => (n.ipConfigurations ?? []).flatMap((c) => c.privateIPAddress ?? [])));
}

async function pass(h: Harness, id: string) {
  const report = await h.services.reconcile(target(id), { reason: "test", attempt: 0 });
  h.sim.control.settle();
  return report;
}

async function declareAndPass(h: Harness, d: Declaration) {
  await h.services.declarations.upsert(target(d.scaleSetId), d);
  return pass(h, d.scaleSetId);
}

const stored = async (h: Harness, id: string) => h.services.declarations.listForTarget(target(id));

describe("Application Gateway pools that list addresses (issue 43)", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const start = (opts: { capacity?: number; vms?: number } = {}) =>
    startHarness({
      sim: { seed: poolKindWorld(opts) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}`, POOLSYNC_GATHER_MILLISECONDS: "0" },
    });

  it("puts the members' IPs in the pool with one gateway PUT on its ETag, keeps another writer's, takes out only ours", async () => {
    h = await start({ capacity: 3 });
    const members = await memberIps(h, KINDS.scaleSet);
    expect(members).toHaveLength(3);
    const etagBefore = h.sim.control.poolState(POOL)!.etag;
    h.sim.control.resetStats();
    const report = await declareAndPass(h, declaration(KINDS.scaleSet, "present"));
    expect(report.result).toBe("applied");
    expect(sorted(ips(h))).toEqual(sorted([...FOREIGN, ...members]));
    expect(
      addresses(h)
        .map((a) => a.fqdn)
        .filter(Boolean),
    ).toEqual([FQDN]);
    // One PUT of the gateway, none of the scale set, its instances or any NIC: the pool lists the addresses.
    expect(h.sim.control.stats(KINDS.gateway).networkPuts).toBe(1);
    expect(h.sim.control.stats(KINDS.scaleSet).puts).toBe(0);
    expect(h.sim.control.stats().nicPuts).toBe(0);
    expect(h.sim.control.poolState(POOL)!.ipConfigurations).toEqual([]);
    const etag = h.sim.control.poolState(POOL)!.etag;
    expect(etag).not.toBe(etagBefore);
    const [d] = await stored(h, KINDS.scaleSet);
    expect(d?.outcome).toMatchObject({ kind: "applied", via: "pool", appliedEtag: etag });
    // The write is the one the custom role's opt-in gateway actions grant (infra/access.json's poolActions).
    const writes = h.sim.control.events().filter((e) => e.subject.toLowerCase() === KINDS.gateway.toLowerCase());
    expect(writes.map((e) => (e.data as { operationName?: string }).operationName)).toEqual([
      "Microsoft.Network/applicationGateways/write",
    ]);
    expect(POOL_ACTIONS).toContain("Microsoft.Network/applicationGateways/write");

    // Scale in: the next pass takes out the gone instance's address, and only it.
    h.sim.control.scale(KINDS.scaleSet, 2);
    h.sim.control.settle();
    await pass(h, KINDS.scaleSet);
    expect(sorted(ips(h))).toEqual(sorted([...FOREIGN, ...(await memberIps(h, KINDS.scaleSet))]));

    await declareAndPass(h, declaration(KINDS.scaleSet, "absent"));
    expect(ips(h)).toEqual(FOREIGN);
    expect(
      addresses(h)
        .map((a) => a.fqdn)
        .filter(Boolean),
    ).toEqual([FQDN]);
    const [gone] = await stored(h, KINDS.scaleSet);
    expect(gone?.outcome).toMatchObject({ kind: "applied", appliedEverywhere: true });
  });

  it("a write that meets another writer's gateway change (412) reads again and keeps both", async () => {
    h = await start();
    h.sim.control.beforeNextWrite(KINDS.gateway, (agw) => {
      const pools = (agw["properties"] as JsonObject)["backendAddressPools"] as JsonObject[];
      const pool = pools.find((p) => p["name"] === "addrs")!;
      const props = pool["properties"] as JsonObject;
      props["backendAddresses"] = [...((props["backendAddresses"] as JsonObject[]) ?? []), { ipAddress: "10.1.250.2" }];
    });
    const report = await declareAndPass(h, declaration(KINDS.vm(0), "present"));
    expect(report.preconditionFailures).toBe(1);
    expect(sorted(ips(h))).toEqual(sorted([...FOREIGN, "10.1.250.2", ...(await memberIps(h, KINDS.vm(0)))]));
  });

  it("another writer adding and removing its own addresses all along: nothing lost on either side", async () => {
    h = await start({ capacity: 2, vms: 3 });
    const targets = [KINDS.scaleSet, KINDS.vm(0), KINDS.vm(1), KINDS.vm(2)];
    const theirs = new Set(FOREIGN);
    let n = 0;
    // The other writer changes the gateway between our read and our write (each pass's PUT meets it once: 412, read
    // again, write again), and between our passes (adding one address of its own, removing its previous one).
    const interleave = (agw: JsonObject) => {
      const pool = ((agw["properties"] as JsonObject)["backendAddressPools"] as JsonObject[]).find(
        (p) => p["name"] === "addrs",
      )!;
      const props = pool["properties"] as JsonObject;
      const next = `10.1.251.${++n}`;
      props["backendAddresses"] = [...((props["backendAddresses"] as JsonObject[]) ?? []), { ipAddress: next }];
      theirs.add(next);
    };
    for (const [i, t] of targets.entries()) {
      const raced = h.sim.control.beforeNextWrite(KINDS.gateway, interleave);
      const report = await declareAndPass(h, declaration(t, "present"));
      expect(report).toMatchObject({ result: "applied", preconditionFailures: 1 });
      expect(raced.applied()).toBe(1);
      const add = `10.1.252.${i}`;
      const remove = i > 0 ? `10.1.252.${i - 1}` : undefined;
      h.sim.control.writePoolAddresses(POOL, { add: [{ ipAddress: add }], ...(remove ? { remove: [remove] } : {}) });
      h.sim.control.settle();
      theirs.add(add);
      if (remove) theirs.delete(remove);
    }
    const ours = (await Promise.all(targets.map((t) => memberIps(h!, t)))).flat();
    expect(sorted(ips(h))).toEqual(sorted([...theirs, ...ours]));
    for (const t of targets) expect((await stored(h, t))[0]?.outcome.kind).toBe("applied");

    // Every target's absent takes out its own addresses and nothing of the other writer's.
    for (const t of targets.slice(0, 2)) {
      h.sim.control.beforeNextWrite(KINDS.gateway, interleave);
      expect((await declareAndPass(h, declaration(t, "absent"))).preconditionFailures).toBe(1);
    }
    const left = (await Promise.all(targets.slice(2).map((t) => memberIps(h!, t)))).flat();
    expect(sorted(ips(h))).toEqual(sorted([...theirs, ...left]));
    for (const t of targets.slice(2)) await declareAndPass(h, declaration(t, "absent"));
    expect(sorted(ips(h))).toEqual(sorted([...theirs]));
  });

  it("an absent whose gateway writes all meet another writer's change (412 until the pass comes back) takes ours out on the next pass", async () => {
    h = await startHarness({
      sim: { seed: poolKindWorld({ capacity: 2 }) },
      env: {
        POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}`,
        POOLSYNC_GATHER_MILLISECONDS: "0",
        POOLSYNC_MAX_PRECONDITION_RETRIES: "1",
      },
    });
    const members = await memberIps(h, KINDS.scaleSet);
    await declareAndPass(h, declaration(KINDS.scaleSet, "present"));
    expect(sorted(ips(h))).toEqual(sorted([...FOREIGN, ...members]));
    // Every write of this pass meets another writer's change: the claims the absent dropped before its first write
    // must come back with the 412, or the next pass reads our addresses as another writer's and leaves them.
    let n = 0;
    const raced = h.sim.control.beforeNextWrite(
      KINDS.gateway,
      (agw) => {
        const pool = ((agw["properties"] as JsonObject)["backendAddressPools"] as JsonObject[]).find(
          (p) => p["name"] === "addrs",
        )!;
        const props = pool["properties"] as JsonObject;
        props["backendAddresses"] = [
          ...((props["backendAddresses"] as JsonObject[]) ?? []),
          { ipAddress: `10.1.251.${++n}` },
        ];
      },
      { times: 2 },
    );
    await declareAndPass(h, declaration(KINDS.scaleSet, "absent"));
    expect(raced.applied()).toBe(2);
    expect(sorted(ips(h))).toEqual(sorted([...FOREIGN, "10.1.251.1", "10.1.251.2", ...members]));
    expect((await stored(h, KINDS.scaleSet))[0]?.outcome.kind).not.toBe("applied");

    await pass(h, KINDS.scaleSet);
    expect(sorted(ips(h))).toEqual(sorted([...FOREIGN, "10.1.251.1", "10.1.251.2"]));
    expect((await stored(h, KINDS.scaleSet))[0]?.outcome).toMatchObject({ kind: "applied", appliedEverywhere: true });
  });

  it("plans one gateway write on the gateway's ETag with the IPs it would add, and, after them, only ours to take out", async () => {
    h = await start({ capacity: 2 });
    const members = await memberIps(h, KINDS.scaleSet);
    await h.services.declarations.upsert(target(KINDS.scaleSet), declaration(KINDS.scaleSet, "present"));
    h.sim.control.resetStats();
    const planned = await h.services.plan(target(KINDS.scaleSet));
    const write = (gain: string[], lose: string[]) => ({
      kind: "pool",
      id: POOL,
      ifMatch: h!.sim.control.poolState(POOL)?.etag,
      ipConfigurations: [],
      addresses: {
        gain: gain.map((ip) => expect.stringMatching(new RegExp(`^${ip.replace(/\./g, "\\.")} \\(poolsync-`))),
        lose: lose.map((ip) => expect.stringMatching(new RegExp(`^${ip.replace(/\./g, "\\.")} \\(poolsync-`))),
      },
      basedOn: { source: "arm", ageMs: 0 },
    });
    expect(planned.writes).toEqual([write(members, [])]);
    expect(h.sim.control.stats().networkPuts).toBe(0);
    expect(ips(h)).toEqual(FOREIGN);

    await pass(h, KINDS.scaleSet);
    // Another writer lists one of the members' IPs again: the plan of the absent takes out ours, one entry each.
    h.sim.control.writePoolAddresses(POOL, { add: [{ ipAddress: members[0]! }] });
    h.sim.control.settle();
    await h.services.declarations.upsert(target(KINDS.scaleSet), declaration(KINDS.scaleSet, "absent"));
    expect((await h.services.plan(target(KINDS.scaleSet))).writes).toEqual([write([], members)]);
  });

  it("without the opt-in gateway read (403), a gateway pool is joined through the NIC as before, and not asked again", async () => {
    h = await start();
    h.sim.control.injectFault({
      method: "GET",
      path: "/applicationGateways/agw$",
      times: Infinity,
      status: 403,
      body: { error: { code: "AuthorizationFailed", message: "no Microsoft.Network/applicationGateways/read" } },
    });
    h.sim.control.resetStats();
    expect((await declareAndPass(h, declaration(KINDS.vm(0), "present", KINDS.gatewayPool))).result).toBe("applied");
    await pass(h, KINDS.vm(0));
    expect(h.sim.control.poolState(KINDS.gatewayPool)!.ipConfigurations).toHaveLength(1);
    expect(h.sim.control.stats(KINDS.gateway).networkGets).toBe(1);
    expect(h.logs.lines.filter((l) => l.event === "pool.kind-unknown")).toHaveLength(1);
  });

  it("the same IP as another writer's: listed before us it is never ours; listed again after us, theirs stays", async () => {
    h = await start({ vms: 2 });
    const [ip0] = await memberIps(h, KINDS.vm(0));
    const [ip1] = await memberIps(h, KINDS.vm(1));
    // Before: the other writer lists vm-0's IP first. poolsync adds nothing (the member is in the pool) and claims
    // nothing, so its absent leaves the address alone.
    h.sim.control.writePoolAddresses(POOL, { add: [{ ipAddress: ip0! }] });
    h.sim.control.settle();
    expect((await declareAndPass(h, declaration(KINDS.vm(0), "present"))).result).toBe("unchanged");
    expect(ips(h).filter((a) => a === ip0)).toHaveLength(1);
    expect((await stored(h, KINDS.vm(0)))[0]?.outcome.kind).toBe("applied");
    await declareAndPass(h, declaration(KINDS.vm(0), "absent"));
    expect(ips(h).filter((a) => a === ip0)).toHaveLength(1);

    // After: poolsync adds vm-1's IP, then the other writer lists the same IP too. The absent takes out one entry,
    // ours, and the other writer's stays; a further pass leaves it alone.
    await declareAndPass(h, declaration(KINDS.vm(1), "present"));
    expect(ips(h).filter((a) => a === ip1)).toHaveLength(1);
    h.sim.control.writePoolAddresses(POOL, { add: [{ ipAddress: ip1! }] });
    h.sim.control.settle();
    expect(ips(h).filter((a) => a === ip1)).toHaveLength(2);
    await declareAndPass(h, declaration(KINDS.vm(1), "absent"));
    expect(ips(h).filter((a) => a === ip1)).toHaveLength(1);
    await pass(h, KINDS.vm(1));
    expect(ips(h).filter((a) => a === ip1)).toHaveLength(1);
    expect(ips(h)).toEqual(expect.arrayContaining([...FOREIGN, ip0!]));
  });
});
