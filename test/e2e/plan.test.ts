import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../devkit/freePorts";
import { instanceNics, modelNics, nicPoolsByIpConfig, poolsByIpConfig } from "../../sim/wire";
import { IDS, simClient, startLocalProcess, storage, waitFor, type LocalProcess } from "./support";

/**
 * The dry run and the plan through `npm run local`: what a declaration would write (per resource, with the ETag it
 * would be conditioned on, the pools each ip configuration would gain and lose), with nothing stored, enqueued or
 * written to ARM.
 */

const RG = IDS.scaleSet.replace(/\/providers\/.*$/, "/providers");
const VM = `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const VM_NIC = `${RG}/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const pool = IDS.pool.toLowerCase();

type Plan = {
  targetId: string;
  declarations: number;
  writes: {
    kind: string;
    id: string;
    ifMatch: string;
    ipConfigurations: { nicConfiguration: string; ipConfiguration: string; gain: string[]; lose: string[] }[];
    basedOn: { source: string; ageMs: number };
  }[];
  basedOn: { source: string; oldestAgeMs: number };
};

describe("npm run local: PUT ?dryRun=true and GET /api/plan store, enqueue and write nothing", () => {
  let local: LocalProcess;
  let sim: ReturnType<typeof simClient>;
  let base: string;
  let st: ReturnType<typeof storage>;

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
    base = `http://127.0.0.1:${runtime}/api`;
    st = storage({ blob, queue, table });
  });

  afterAll(async () => {
    await local?.interrupt();
  });

  const armWrites = async () => {
    const s = await sim.stats();
    return ["puts", "patches", "deletes", "actions", "instancePuts", "nicPuts"].reduce((n, k) => n + (s[k] ?? 0), 0);
  };
  const rows = async (name: string) => {
    const out: unknown[] = [];
    try {
      for await (const r of st.table(name).listEntities()) out.push(r);
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 404) throw err;
    }
    return out;
  };
  const queueDepth = async () => {
    try {
      return (await st.queue("backendpool-updates").getProperties()).approximateMessagesCount ?? 0;
    } catch {
      return 0;
    }
  };
  const dryRun = (body: object, flag = "true") =>
    fetch(`${base}/memberships?dryRun=${flag}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("a dry run on a Uniform scale set answers the model and both instances gaining the pool, on their current ETags, and changes nothing", async () => {
    const before = { writes: await armWrites(), memberships: await rows("memberships"), depth: await queueDepth() };
    const res = await dryRun({ targetId: IDS.scaleSet, backendPoolId: IDS.pool, state: "present" });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { dryRun: boolean; wouldStore: Record<string, unknown>; plan: Plan };
    expect(body.dryRun).toBe(true);
    expect(body.wouldStore).toMatchObject({
      targetId: IDS.scaleSet,
      backendPoolId: IDS.pool,
      ipConfiguration: null,
      state: "present",
      declaredBy: { via: expect.any(String) },
    });

    const model = await sim.resource(IDS.scaleSet);
    const instances = await sim.instances(IDS.scaleSet);
    expect(body.plan.writes.map((w) => [w.kind, w.id.toLowerCase(), w.ifMatch])).toEqual([
      ["model", IDS.scaleSet.toLowerCase(), model.etag],
      ...instances.map((i) => ["instance", String(i.id).toLowerCase(), i.etag]),
    ]);
    for (const w of body.plan.writes)
      expect(w.ipConfigurations).toEqual([
        { nicConfiguration: "etag-k8s-mp-0-nic-0", ipConfiguration: "ipConfig0", gain: [pool], lose: [] },
      ]);
    expect(body.plan.basedOn.source).toBe("arm");

    // Nothing stored, nothing enqueued, nothing written to ARM, nothing changed on the model or the instances.
    expect(await armWrites()).toBe(before.writes);
    expect(await rows("memberships")).toEqual(before.memberships);
    expect(await queueDepth()).toBe(before.depth);
    expect(poolsByIpConfig(modelNics(await sim.resource(IDS.scaleSet)))).toEqual({ ipConfig0: [] });
    expect((await sim.instances(IDS.scaleSet)).map((i) => poolsByIpConfig(instanceNics(i)))).toEqual([
      { ipConfig0: [] },
      { ipConfig0: [] },
    ]);
    expect(local.logs().filter((l) => l.event === "arm.write" || l.event === "intake.declared")).toEqual([]);
    const view = (await (await fetch(`${base}/memberships?targetId=${encodeURIComponent(IDS.scaleSet)}`)).json()) as {
      memberships: unknown[];
    };
    expect(view.memberships).toEqual([]);
  });

  it("a dry run is validated as a real declaration: a bad field is refused the same way, and a bad dryRun value is named", async () => {
    const bad = await dryRun({ targetId: IDS.scaleSet, backendPoolId: "not-a-pool", state: "present" });
    const real = await fetch(`${base}/memberships`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ targetId: IDS.scaleSet, backendPoolId: "not-a-pool", state: "present" }),
    });
    expect(bad.status).toBe(real.status);
    expect(await bad.json()).toEqual(await real.json());
    const flag = await dryRun({ targetId: IDS.scaleSet, backendPoolId: IDS.pool, state: "present" }, "maybe");
    expect(flag.status).toBe(400);
    expect(await flag.json()).toEqual({
      error: { code: "invalid_field", message: "dryRun: must be true or false", field: "dryRun" },
    });
  });

  it("GET /api/plan on a VM: a pending declaration's plan names its NIC and ETag; once applied, no write, read from the fresh cache", async () => {
    const dry = await dryRun({ targetId: VM, backendPoolId: IDS.pool, state: "present" });
    const planned = ((await dry.json()) as { plan: Plan }).plan;
    const nicBefore = await sim.resource(VM_NIC);
    expect(planned.writes).toEqual([
      {
        kind: "nic",
        id: expect.stringMatching(new RegExp(`${VM_NIC.split("/").pop()}$`, "i")),
        ifMatch: nicBefore.etag,
        ipConfigurations: [
          { nicConfiguration: "etag-k8s-vm-0-nic", ipConfiguration: "ipConfig0", gain: [pool], lose: [] },
        ],
        basedOn: expect.objectContaining({ source: expect.any(String) }),
      },
    ]);

    const res = await fetch(`${base}/memberships`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ targetId: VM, backendPoolId: IDS.pool, state: "present" }),
    });
    expect(res.status).toBe(202);
    await waitFor(
      "the VM's NIC in the pool",
      async () => nicPoolsByIpConfig(await sim.resource(VM_NIC)),
      (p) => JSON.stringify(p) === JSON.stringify({ ipConfig0: [pool] }),
      30_000,
    );
    const plan = async () => (await (await fetch(`${base}/plan?targetId=${encodeURIComponent(VM)}`)).json()) as Plan;
    await waitFor("an empty plan once applied", plan, (p) => p.writes.length === 0 && p.declarations === 1, 30_000);

    const writesBefore = await armWrites();
    const nicGetsBefore = (await sim.stats(VM_NIC)).nicGets;
    const p = await plan();
    // As the reconcile: the VM is read (its NIC list), the NIC comes from its fresh cache row.
    expect(p.basedOn.source).toBe("mixed");
    expect((await sim.stats(VM_NIC)).nicGets).toBe(nicGetsBefore);
    expect(await armWrites()).toBe(writesBefore);
  });
});
