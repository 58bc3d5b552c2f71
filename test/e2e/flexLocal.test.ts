import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../devkit/freePorts";
import { modelNics, nicPoolsByIpConfig, poolsByIpConfig } from "../../sim/wire";
import { IDS, simClient, startLocalProcess, waitFor, type LocalProcess } from "./support";

/**
 * `npm run local` driven over HTTP only: a Flexible scale set, a standalone VM and a dual-stack declaration go from
 * PUT /api/memberships to applied everywhere while another writer races on the NICs (the simulator's interleaved
 * writer, set over /_sim/), and nothing that writer changed is lost.
 */

const RG = IDS.scaleSet.replace(/\/providers\/.*$/, "/providers");
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const VM = `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const VM_NIC = `${RG}/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const V6_POOL = IDS.pool.replace(/etag-k8s$/, "etag-k8s-v6");
const pool = IDS.pool.toLowerCase();
const v6 = V6_POOL.toLowerCase();

describe("npm run local: Flexible scale set, standalone VM and dual stack over the HTTP API, another writer racing on the NICs", () => {
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
      { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "1", POOLSYNC_OPERATION_POLL_SECONDS: "0.05" },
    );
    sim = simClient(`https://127.0.0.1:${simPort}`);
    api = `http://127.0.0.1:${runtime}/api/memberships`;
  });

  afterAll(async () => {
    await local?.interrupt();
  });

  const put = async (body: Record<string, unknown>) => {
    const res = await fetch(api, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    return (await res.json()) as { requestId: string; targetId: string };
  };
  const view = async (targetId: string) =>
    (await (await fetch(`${api}?targetId=${encodeURIComponent(targetId)}`)).json()) as {
      targetKind: string;
      memberships: { backendPoolId: string; outcome: { kind: string; reason?: string } }[];
    };
  const nicIdsOf = async (vmId: string) =>
    (
      (await sim.resource(vmId)).properties as { networkProfile: { networkInterfaces: { id: string }[] } }
    ).networkProfile.networkInterfaces.map((n) => n.id);
  /**
   * Another writer that read the NIC now and PUTs that copy later, just before our next write to it, with its own
   * change.
   */
  const raceOn = async (
    nicId: string,
    change: (ipcs: { name: string; properties: { loadBalancerBackendAddressPools?: { id: string }[] } }[]) => void,
    tags?: Record<string, string>,
  ) => {
    const stale = (await sim.resource(nicId)).properties as {
      ipConfigurations: { name: string; properties: { loadBalancerBackendAddressPools?: { id: string }[] } }[];
    };
    const ipcs = structuredClone(stale.ipConfigurations);
    change(ipcs);
    const r = await sim.call("POST", "/_sim/interleave", {
      id: nicId,
      merge: { ...(tags ? { tags } : {}), properties: { ipConfigurations: ipcs } },
    });
    expect(r.status).toBe(200);
  };

  it("all three end applied, in the pools, with the other writer's changes kept", async () => {
    const flexVms = [
      `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-flex-0_00000000`,
      `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-flex-0_00000001`,
    ];
    const [nic0] = (await nicIdsOf(flexVms[0] as string)) as [string];
    const [nic1] = (await nicIdsOf(flexVms[1] as string)) as [string];
    // Flexible VM 0: the other writer's stale copy carries its own pool on the IPv6 ip configuration.
    await raceOn(nic0, (ipcs) => {
      const c = ipcs.find((x) => x.name === "ipConfig0-v6");
      if (c) c.properties.loadBalancerBackendAddressPools = [{ id: V6_POOL }];
    });
    // Flexible VM 1 and the standalone VM: a tag change in a stale whole-NIC PUT.
    await raceOn(nic1, () => undefined, { team: "other" });
    await raceOn(VM_NIC, () => undefined, { team: "other" });

    await put({ targetId: FLEX, backendPoolId: IDS.pool, state: "present" });
    await put({ targetId: VM, backendPoolId: IDS.pool, state: "present" });
    await put({ targetId: FLEX, backendPoolId: V6_POOL, ipVersion: "IPv6", state: "present" });

    for (const target of [FLEX, VM]) {
      await waitFor(
        `${target} applied`,
        () => view(target),
        (v) => v.memberships.length > 0 && v.memberships.every((m) => m.outcome.kind === "applied"),
        60_000,
      );
    }
    expect((await view(VM)).targetKind).toBe("vm");
    expect(nicPoolsByIpConfig(await sim.resource(nic0))).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [v6] });
    expect(nicPoolsByIpConfig(await sim.resource(nic1))).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [v6] });
    expect((await sim.resource(nic1)).tags).toEqual({ team: "other" });
    expect(nicPoolsByIpConfig(await sim.resource(VM_NIC))).toEqual({ ipConfig0: [pool] });
    expect((await sim.resource(VM_NIC)).tags).toEqual({ team: "other" });
    expect(poolsByIpConfig(modelNics(await sim.resource(FLEX)))).toEqual({ ipConfig0: [pool], "ipConfig0-v6": [v6] });
    const members = await sim.poolMembers(IDS.pool);
    expect(members.filter((m) => /networkInterfaces\//.test(m))).toHaveLength(3);
    // Each raced NIC: our first If-Match write refused, then re-read and written.
    for (const nic of [nic0, nic1, VM_NIC]) expect((await sim.stats(nic)).status412).toBeGreaterThanOrEqual(1);
    expect(local.logs().filter((l) => l.event === "message.poisoned")).toEqual([]);
    const own = local
      .logs()
      .filter(
        (l) => l.event === "event" && l.outcome === "own-write" && String(l.resourceId).includes("/networkInterfaces/"),
      );
    expect(own.length).toBeGreaterThan(0);
  });
});
