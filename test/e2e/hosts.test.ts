import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../devkit/freePorts";
import { addIpConfig, instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { DEMO_SUBSCRIPTION, type JsonObject } from "../../sim";
import { IDS, simClient, startLocalProcess, waitFor, type LocalProcess } from "./support";

/**
 * `npm run local -- --hosts 3 --throttling`: three host processes over one Azurite and one simulator that enforces
 * CRP's and ARM's buckets. Declarations go to the hosts in turn; one host is killed in the middle of a reconcile.
 */

const RG = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/burst`;
const SCALE_SETS = Array.from(
  { length: 6 },
  (_, i) => `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/burst-${i}`,
);
const POOLS = Array.from(
  { length: 3 },
  (_, i) => `${RG}/providers/Microsoft.Network/loadBalancers/burst-lb/backendAddressPools/pool-${i}`,
);

const BURST_SEED = {
  subscriptions: [
    {
      id: DEMO_SUBSCRIPTION,
      resourceGroups: [
        {
          name: "burst",
          location: "westeurope",
          virtualNetworks: [
            {
              name: "vnet",
              addressPrefixes: ["10.0.0.0/8"],
              subnets: [{ name: "nodes", addressPrefix: "10.2.0.0/16" }],
            },
          ],
          loadBalancers: [{ name: "burst-lb", backendPools: ["pool-0", "pool-1", "pool-2"] }],
          scaleSets: SCALE_SETS.map((_, i) => ({
            name: `burst-${i}`,
            capacity: 2,
            nics: [
              {
                name: "nic-0",
                primary: true,
                ipConfigurations: [{ name: "ipConfig0", primary: true, subnet: "vnet/nodes" }],
              },
            ],
          })),
        },
      ],
    },
  ],
};

/** The app's JSON log lines of every host, each with the port of the host that printed it. */
function hostLogs(local: LocalProcess): Array<Record<string, unknown> & { host: number }> {
  return local.lines.flatMap((l) => {
    const m = /^\[(\d+)\] (\{.*)$/.exec(l);
    if (!m) return [];
    try {
      return [{ ...(JSON.parse(m[2] as string) as Record<string, unknown>), host: Number(m[1]) }];
    } catch {
      return [];
    }
  });
}

describe("npm run local -- --hosts 3 --throttling", () => {
  let local: LocalProcess;
  let sim: ReturnType<typeof simClient>;
  let hosts: Array<{ url: string; port: number; pid: number }>;
  let next = 0;
  const declareOn = async (scaleSetId: string, backendPoolId: string, state: "present" | "absent", host?: number) => {
    const h = hosts[host ?? next++ % hosts.length]!;
    const res = await fetch(`${h.url}/api/memberships`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ scaleSetId, backendPoolId, state }),
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
  };
  const poolsOf = async (id: string) => ({
    model: poolsByIpConfig(modelNics(await sim.resource(id))).ipConfig0 ?? [],
    instances: (await sim.instances(id)).map((vm) => poolsByIpConfig(instanceNics(vm)).ipConfig0 ?? []),
  });
  const holds = (p: { model: string[]; instances: string[][] }, pools: string[]) =>
    [p.model, ...p.instances].every(
      (have) => JSON.stringify([...have].sort()) === JSON.stringify(pools.map((x) => x.toLowerCase()).sort()),
    );

  beforeAll(async () => {
    const [simPort, blob, queue, table] = (await freePorts(4)) as [number, number, number, number];
    local = await startLocalProcess(
      [
        "--hosts",
        "3",
        "--throttling",
        "--port",
        "0",
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
        // Long enough that the killed host's lease still stands when the next declaration's pass reaches it on a loaded
        // machine (a window's 2 s, then the queue's polling), so the live host is seen deferring to it.
        POOLSYNC_RECONCILE_LEASE_SECONDS: "15",
        // A pass writes only with a request timeout's worth of lease left: a lease this short needs a shorter timeout.
        POOLSYNC_ARM_TIMEOUT_SECONDS: "5",
        POOLSYNC_EVENT_DEBOUNCE_SECONDS: "1",
        POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
      },
      90_000,
    );
    sim = simClient(`https://127.0.0.1:${simPort}`);
    const line = local.lines.find((l) => l.startsWith("Hosts: ")) ?? "";
    hosts = [...line.matchAll(/http:\/\/127\.0\.0\.1:(\d+) \(pid (\d+)\)/g)].map((m) => ({
      url: `http://127.0.0.1:${m[1]}`,
      port: Number(m[1]),
      pid: Number(m[2]),
    }));
    const seeded = await sim.call("POST", "/_sim/seed", BURST_SEED);
    expect(seeded.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await local?.interrupt(60_000);
  });

  it("three hosts, each line prefixed with its port, the timer on exactly one of them", () => {
    expect(hosts).toHaveLength(3);
    for (const h of hosts)
      expect(local.lines.some((l) => l.startsWith(`[${h.port}] \tapplyBackendPools: queueTrigger`))).toBe(true);
    const timerHolders = local.lines.filter((l) => /^\[\d+\] \treconcileStale: timerTrigger .* next=/.test(l));
    expect(timerHolders).toHaveLength(1);
    expect(local.lines.join("\n")).toContain("CRP and ARM throttling enforced");
  });

  it("a burst across six scale sets, declared over all three hosts: every pool everywhere, at most two model writes per scale set, no 429", async () => {
    for (const pool of POOLS) for (const ss of SCALE_SETS) await declareOn(ss, pool, "present");
    for (const ss of SCALE_SETS)
      await waitFor(
        `${ss} to hold all three pools`,
        () => poolsOf(ss),
        (p) => holds(p, POOLS),
        90_000,
      );
    const puts = await Promise.all(SCALE_SETS.map(async (ss) => (await sim.stats(ss)).puts));
    // The leading reconcile of each (quiet) scale set, and the one window the rest of its burst joined.
    expect(puts.map((n) => (n ?? 0) >= 1 && (n ?? 0) <= 2)).toEqual(SCALE_SETS.map(() => true));
    expect(await sim.stats()).toMatchObject({ status429: 0 });
  }, 120_000);

  it("the seed's race: another writer adds ipConfig1 between poolsync's read and its write; both changes survive", async () => {
    const id = IDS.scaleSet;
    const model = await sim.resource(id);
    addIpConfig("ipConfig1", IDS.subnet)(model);
    const interleave = await sim.call("POST", "/_sim/interleave", {
      id,
      merge: {
        properties: { virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: modelNics(model) } } },
      } as unknown as JsonObject,
    });
    expect(interleave.status).toBe(200);
    await declareOn(id, IDS.pool, "present", 1);
    const done = await waitFor(
      "our pool on ipConfig0 and their ipConfig1 kept",
      async () => poolsByIpConfig(modelNics(await sim.resource(id))),
      (p) => p.ipConfig0?.length === 1 && "ipConfig1" in p,
      60_000,
    );
    expect(done).toEqual({ ipConfig0: [IDS.pool.toLowerCase()], ipConfig1: [] });
    expect((await sim.stats(id)).status412).toBeGreaterThanOrEqual(1);
    expect(await sim.stats()).toMatchObject({ status429: 0 });
  }, 90_000);

  it("a host killed in the middle of a reconcile: its lease expires and a later declaration's reconcile applies both", async () => {
    const ss = SCALE_SETS[0]!;
    const before = hostLogs(local).length;
    // The instances answer 5 s late until the kill: the host that wrote the model is still in its pass when it dies,
    // holding the lease (without this, a fast pass could end, and release the lease, before the kill lands).
    const slowInstances = await sim.call("POST", "/_sim/faults", {
      path: `/virtualMachineScaleSets/${ss.split("/").pop()!}/virtualMachines/\\d+$`,
      delayMs: 5_000,
      times: "always",
    });
    expect(slowInstances.status).toBe(200);
    await declareOn(ss, POOLS[0]!, "absent", 0);
    // Kill the host as soon as it has written the model (its instances not yet).
    const first = await waitFor(
      "a host's first write of the removal",
      () =>
        hostLogs(local)
          .slice(before)
          .find((l) => l.event === "arm.write" && l.outcome === "ok" && l.scaleSetId === ss),
      (l) => l !== undefined,
      60_000,
    );
    const victim = hosts.find((h) => h.port === first?.host)!;
    process.kill(victim.pid, "SIGKILL");
    hosts = hosts.filter((h) => h !== victim);
    expect((await sim.call("DELETE", "/_sim/faults")).status).toBe(200);
    // Another change of the same scale set arrives at a live host while the dead host's lease still stands.
    await declareOn(ss, POOLS[1]!, "absent");
    await waitFor(
      `${ss} to hold pool-2 only`,
      () => poolsOf(ss),
      (p) => holds(p, [POOLS[2]!]),
      90_000,
    );
    // A live host found the dead host's lease held, deferred, and its delayed reconcile did the work once it expired.
    const live = () =>
      hostLogs(local)
        .slice(before)
        .filter((l) => l.host !== victim.port && l.event === "reconcile" && l.scaleSetId === ss);
    await waitFor(
      "a live host's reconcile of the scale set to report applied",
      live,
      (ls) => ls.some((l) => l.result === "applied"),
      30_000,
    );
    expect(live().some((l) => l.result === "deferred" || String(l.trigger).startsWith("lease check:"))).toBe(true);
    expect(await sim.stats()).toMatchObject({ status429: 0 });
  }, 120_000);
});
