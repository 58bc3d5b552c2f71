import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../devkit/freePorts";
import { KINDS, KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import { DEMO_SUBSCRIPTION, type JsonObject } from "../../sim";
import { simClient, startLocalProcess, waitFor, type LocalProcess } from "./support";

/**
 * Every pool kind of issue 43 end to end: `npm run local`'s real HTTP API, its queue trigger and events, the
 * simulator over https, while another writer changes the same pool or resource all along. Each case ends with
 * poolsync's declaration applied and every change of the other writer still there.
 */

interface PoolState {
  etag: string;
  ipConfigurations: string[];
  addresses: { name?: string; ipAddress?: string; fqdn?: string; adminState?: string }[];
}

describe("npm run local: every pool kind, with a concurrent foreign writer (issue 43)", () => {
  let local: LocalProcess;
  let sim: ReturnType<typeof simClient>;
  let api: string;

  beforeAll(async () => {
    const [runtime, simPort, blob, queue, table] = (await freePorts(5)) as [number, number, number, number, number];
    local = await startLocalProcess(
      [
        "--port",
        String(runtime),
        "--sim-port",
        String(simPort),
        "--blob-port",
        String(blob),
        "--queue-port",
        String(queue),
        "--table-port",
        String(table),
        "--event-delay-ms",
        "100",
      ],
      {
        POOLSYNC_SCOPES: `/subscriptions/${DEMO_SUBSCRIPTION},/subscriptions/${KINDS_SUBSCRIPTION}`,
        POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
        POOLSYNC_EVENT_DEBOUNCE_SECONDS: "1",
      },
    );
    sim = simClient(`https://127.0.0.1:${simPort}`);
    const seeded = await sim.call("POST", "/_sim/seed", poolKindWorld({ capacity: 2, vms: 8 }));
    expect(seeded.status).toBe(200);
    api = `http://127.0.0.1:${runtime}/api/memberships`;
  });

  afterAll(async () => {
    await local?.interrupt();
  });

  const poolState = async (id: string) =>
    (await sim.call("GET", `/_sim/pool-state?id=${encodeURIComponent(id)}`)).body as PoolState;
  const put = async (url: string, body: JsonObject) => {
    const res = await fetch(url, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    return (await res.json()) as JsonObject;
  };
  const declare = (targetId: string, backendPoolId: string, extra: JsonObject = {}) =>
    put(api, { targetId, backendPoolId, state: "present", ...extra });
  const outcomes = async (targetId: string) =>
    (
      (await (await fetch(`${api}?targetId=${encodeURIComponent(targetId)}`)).json()) as {
        memberships: { backendPoolId: string; declared: string; outcome: { kind: string; reason?: string } }[];
      }
    ).memberships;
  const applied = (targetId: string, pool: string) =>
    waitFor(
      `${pool} applied on ${targetId}`,
      () => outcomes(targetId),
      (ms) => ms.some((m) => m.backendPoolId.toLowerCase() === pool.toLowerCase() && m.outcome.kind === "applied"),
      60_000,
    );

  /** Another writer adding and removing addresses of its own on a pool, with If-Match, until stopped. */
  function foreignAddressWriter(pool: string) {
    const kept = new Set<string>();
    let stop = false;
    let n = 0;
    const done = (async () => {
      while (!stop) {
        const state = await poolState(pool);
        const name = `theirs-${n}`;
        const remove = n % 3 === 2 ? [`theirs-${n - 2}`] : [];
        const r = await sim.call("POST", "/_sim/pool-addresses", {
          id: pool,
          add: [{ name, ipAddress: `10.1.250.${(n % 200) + 1}`, subnet: KINDS.subnet }],
          remove,
          ifMatch: state.etag,
        });
        if (r.status === 200) {
          kept.add(name);
          for (const x of remove) kept.delete(x);
          n++;
        }
        await new Promise((res) => setTimeout(res, 30));
      }
    })();
    return {
      kept,
      stop: async () => {
        stop = true;
        await done;
      },
    };
  }

  it("an IP-based pool: the scale set's addresses in the pool, the other writer's all kept; a burst of VMs makes one pool write", async () => {
    const theirs = foreignAddressWriter(KINDS.ipPool);
    await declare(KINDS.scaleSet, KINDS.ipPool);
    await applied(KINDS.scaleSet, KINDS.ipPool);
    await theirs.stop();
    // Let a pass that a foreign write's event asked for finish, then look.
    await new Promise((r) => setTimeout(r, 3_000));
    const state = await poolState(KINDS.ipPool);
    const names = state.addresses.map((a) => a.name ?? "");
    expect(names.filter((n) => n.startsWith("poolsync-"))).toHaveLength(2);
    for (const name of theirs.kept) expect(names).toContain(name);
    expect(names.filter((n) => n.startsWith("theirs-")).sort()).toEqual([...theirs.kept].sort());

    const before = (await sim.stats(KINDS.loadBalancer)).networkPuts ?? 0;
    const vms = Array.from({ length: 8 }, (_, i) => KINDS.vm(i));
    await Promise.all(vms.map((vm) => declare(vm, KINDS.ipPool2)));
    for (const vm of vms) await applied(vm, KINDS.ipPool2);
    expect((await poolState(KINDS.ipPool2)).addresses).toHaveLength(8);
    expect(((await sim.stats(KINDS.loadBalancer)).networkPuts ?? 0) - before).toBe(1);
  });

  it("admin state per instance, shown by the API", async () => {
    await declare(KINDS.scaleSet, KINDS.ipPool, { adminState: "Down", instances: ["1"] });
    await waitFor(
      "instance 1's address Down",
      () => poolState(KINDS.ipPool),
      (s) =>
        s.addresses.some((a) => a.name?.endsWith("-1") && a.name.startsWith("poolsync-") && a.adminState === "Down"),
      60_000,
    );
    const m = (await outcomes(KINDS.scaleSet)).find(
      (x) => x.backendPoolId.toLowerCase() === KINDS.ipPool.toLowerCase(),
    );
    expect(m).toMatchObject({ adminState: "Down", adminInstances: ["1"], poolKind: "loadBalancerBackendPool" });
  });

  it("an inbound NAT pool on the scale set, while another writer changes the model's tags", async () => {
    let stop = false;
    let tags = 0;
    const writer = (async () => {
      while (!stop) {
        const r = await sim.call("POST", "/_sim/write", { id: KINDS.scaleSet, merge: { tags: { [`t${tags}`]: "x" } } });
        if (r.status === 200) tags++;
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    await declare(KINDS.scaleSet, KINDS.natPool);
    await applied(KINDS.scaleSet, KINDS.natPool);
    stop = true;
    await writer;
    await waitFor(
      "both instances in the NAT pool",
      () => poolState(KINDS.natPool),
      (s) => s.ipConfigurations.length === 2,
      60_000,
    );
    const model = await sim.resource(KINDS.scaleSet);
    expect(Object.keys((model["tags"] ?? {}) as JsonObject)).toHaveLength(tags);
  });

  it("an application gateway pool on VMs' NICs, while another writer adds its own addresses to the gateway pool", async () => {
    // The first member joins the empty pool through its NIC: from then on the pool is joined by ip configurations (an
    // empty gateway pool says nothing of its kind; one that lists addresses and no ip configuration is written with
    // addresses: the next case).
    await declare(KINDS.vm(0), KINDS.gatewayPool);
    await applied(KINDS.vm(0), KINDS.gatewayPool);
    let stop = false;
    const added: string[] = [];
    const writer = (async () => {
      for (let n = 1; !stop; n++) {
        const r = await sim.call("POST", "/_sim/pool-addresses", {
          id: KINDS.gatewayPool,
          add: [{ ipAddress: `10.1.240.${n}` }],
        });
        if (r.status === 200) added.push(`10.1.240.${n}`);
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    await declare(KINDS.vm(1), KINDS.gatewayPool);
    await applied(KINDS.vm(1), KINDS.gatewayPool);
    stop = true;
    await writer;
    const state = await poolState(KINDS.gatewayPool);
    expect(state.ipConfigurations).toHaveLength(2);
    expect(added.length).toBeGreaterThan(0);
    for (const ip of added) expect(state.addresses.map((a) => a.ipAddress)).toContain(ip);
  });

  it("an application gateway pool that lists addresses: the scale set's IPs written with If-Match on the gateway, another writer's all kept, the absent takes out only ours", async () => {
    const pool = KINDS.addressGatewayPool;
    const seeded = (await poolState(pool)).addresses.map((a) => a.ipAddress ?? a.fqdn);
    // Another writer adding and removing IPs of its own on the same gateway pool, If-Match on the gateway, all along.
    const kept = new Set<string>();
    let stop = false;
    const writer = (async () => {
      for (let n = 1; !stop; n++) {
        const state = await poolState(pool);
        const ip = `10.1.253.${n}`;
        const remove = n % 3 === 0 ? [`10.1.253.${n - 2}`] : [];
        const r = await sim.call("POST", "/_sim/pool-addresses", {
          id: pool,
          add: [{ ipAddress: ip }],
          remove,
          ifMatch: state.etag,
        });
        if (r.status === 200) {
          kept.add(ip);
          for (const x of remove) kept.delete(x);
        } else if (remove.length > 0) n--; // its removal did not happen: try this step again
        await new Promise((res) => setTimeout(res, 30));
      }
    })();
    const others = (s: PoolState) =>
      s.addresses
        .map((a) => a.ipAddress ?? a.fqdn ?? "")
        .filter((a) => !a.startsWith("10.1.253.") && !seeded.includes(a));
    const theirs = (s: PoolState) =>
      s.addresses.flatMap((a) => (a.ipAddress?.startsWith("10.1.253.") ? [a.ipAddress] : []));
    try {
      await declare(KINDS.scaleSet, pool);
      await applied(KINDS.scaleSet, pool);
      const s = await poolState(pool);
      expect(others(s)).toHaveLength(2);
      expect(s.ipConfigurations).toEqual([]);
      await put(api, { targetId: KINDS.scaleSet, backendPoolId: pool, state: "absent" });
      await waitFor(
        "the scale set's addresses gone",
        () => poolState(pool),
        (st) => others(st).length === 0,
        60_000,
      );
    } finally {
      stop = true;
      await writer;
    }
    const after = await poolState(pool);
    expect(after.addresses.map((a) => a.ipAddress ?? a.fqdn)).toEqual(expect.arrayContaining(seeded));
    expect(kept.size).toBeGreaterThan(0);
    expect(theirs(after).sort()).toEqual([...kept].sort());
    expect(others(after)).toEqual([]);
  });

  it("a move: one write per resource, and the scale set in one of the two pools at every sample", async () => {
    await declare(KINDS.scaleSet, KINDS.nicPool);
    await applied(KINDS.scaleSet, KINDS.nicPool);
    await waitFor(
      "both instances in the first pool",
      () => poolState(KINDS.nicPool),
      (s) => s.ipConfigurations.length === 2,
      60_000,
    );
    const before = await sim.stats(KINDS.scaleSet);
    const instance412Before = (
      await Promise.all(["0", "1"].map((i) => sim.stats(`${KINDS.scaleSet}/virtualMachines/${i}`)))
    ).reduce((n, st) => n + (st.status412 ?? 0), 0);
    const samples: { a: number; b: number }[] = [];
    let stop = false;
    const sampler = (async () => {
      while (!stop) {
        // One after the other, the pool moved from first: two requests at once may be answered in either order, and
        // the old pool read after an instance's write with the new one read before it shows the instance in neither.
        const a = await poolState(KINDS.nicPool);
        const b = await poolState(KINDS.nicPool2);
        const ids = (s: PoolState) => new Set(s.ipConfigurations.map((i) => i.toLowerCase()));
        const inA = ids(a);
        const inB = ids(b);
        const instances = ["0", "1"].map((i) =>
          `${KINDS.scaleSet}/virtualMachines/${i}/networkInterfaces/ss-nic/ipConfigurations/ipc`.toLowerCase(),
        );
        samples.push({ a: instances.filter((i) => inA.has(i)).length, b: instances.filter((i) => inB.has(i)).length });
        expect(instances.filter((i) => !inA.has(i) && !inB.has(i))).toEqual([]);
      }
    })();
    const answer = await put(`${api}/move`, { targetId: KINDS.scaleSet, from: KINDS.nicPool, to: KINDS.nicPool2 });
    expect(answer).toMatchObject({ from: KINDS.nicPool, to: KINDS.nicPool2, status: "accepted" });
    await waitFor(
      "both instances moved",
      () => poolState(KINDS.nicPool2),
      (s) => s.ipConfigurations.length === 2,
      60_000,
    );
    await waitFor(
      "the first pool empty",
      () => poolState(KINDS.nicPool),
      (s) => s.ipConfigurations.length === 0,
      60_000,
    );
    stop = true;
    await sampler;
    expect(samples.length).toBeGreaterThan(5);
    const after = await sim.stats(KINDS.scaleSet);
    // A model PUT refused with 412 is no write: CRP moves the scale set's ETag seconds after the first declaration's
    // instance writes, and a move that starts inside those seconds meets it, re-reads and writes once.
    const instance412 = async () =>
      (await Promise.all(["0", "1"].map((i) => sim.stats(`${KINDS.scaleSet}/virtualMachines/${i}`)))).reduce(
        (n, st) => n + (st.status412 ?? 0),
        0,
      );
    const modelRefused = (after.status412 ?? 0) - (before.status412 ?? 0) - (await instance412()) + instance412Before;
    expect((after.puts ?? 0) - (before.puts ?? 0) - modelRefused).toBe(1);
    expect(modelRefused).toBeLessThanOrEqual(1);
    expect((after.instancePuts ?? 0) - (before.instancePuts ?? 0)).toBe(2);
    // The outcomes go in with the pass's commit, after its writes: ARM may show the move before the API does.
    const of = (ms: Awaited<ReturnType<typeof outcomes>>, pool: string) =>
      ms.find((m) => m.backendPoolId.toLowerCase() === pool.toLowerCase());
    const ms = await waitFor(
      "both halves of the move applied",
      () => outcomes(KINDS.scaleSet),
      (list) => [KINDS.nicPool, KINDS.nicPool2].every((p) => of(list, p)?.outcome.kind === "applied"),
      60_000,
    );
    expect(of(ms, KINDS.nicPool)).toMatchObject({ declared: "absent", outcome: { kind: "applied" } });
    expect(of(ms, KINDS.nicPool2)).toMatchObject({ declared: "present", outcome: { kind: "applied" } });
  });
});
