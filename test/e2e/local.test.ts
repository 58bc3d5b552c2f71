import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../devkit/freePorts";
import { isPortOpen } from "../../devkit/azurite";
import { uniqueName } from "../../devkit/storage";
import { addIpConfig, dropPool, instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import type { JsonObject } from "../../sim";
import {
  allClosed,
  IDS,
  sendMessage,
  simClient,
  startLocalProcess,
  storage,
  suiteAzuritePorts,
  waitFor,
  type LocalProcess,
} from "./support";

/**
 * `npm run local` as a user runs it: the built main.js as a child process, driven only over HTTP (the runtime, the
 * simulator's ARM surface and /_sim/ control API) and Azurite (the work queue, the tables).
 */

const pool = IDS.pool.toLowerCase();
const declare = (state: "present" | "absent", requestId: string) => ({
  v: 1,
  kind: "declare",
  scaleSetId: IDS.scaleSet,
  backendPoolId: IDS.pool,
  state,
  requestId,
  declaredAt: new Date().toISOString(),
});

/** What another writer sends: the model's NIC configurations with `edit` applied (arrays replace whole in CRP). */
async function otherWriterEditsModel(
  sim: ReturnType<typeof simClient>,
  clientRequestId: string,
  ...edits: Array<(r: JsonObject) => void>
): Promise<void> {
  const model = await sim.resource(IDS.scaleSet);
  for (const edit of edits) edit(model);
  const nics = modelNics(model);
  await sim.write(
    IDS.scaleSet,
    {
      properties: { virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } } },
    } as unknown as JsonObject,
    clientRequestId,
  );
}

const modelPools = async (sim: ReturnType<typeof simClient>) =>
  poolsByIpConfig(modelNics(await sim.resource(IDS.scaleSet)));
const instancePools = async (sim: ReturnType<typeof simClient>) =>
  (await sim.instances(IDS.scaleSet)).map((vm) => poolsByIpConfig(instanceNics(vm)));

describe("npm run local: its own Azurite, the simulator, events → invalidation → reconcile, the timer", () => {
  let local: LocalProcess;
  let ports: { runtime: number; sim: number; blob: number; queue: number; table: number };
  let sim: ReturnType<typeof simClient>;
  let runtimeUrl: string;
  let repairedAt = 0;
  const queueName = "backendpool-updates";

  beforeAll(async () => {
    const [runtime, simPort, blob, queue, table] = (await freePorts(5)) as [number, number, number, number, number];
    ports = { runtime, sim: simPort, blob, queue, table };
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
        POOLSYNC_RECONCILE_SCHEDULE: "*/2 * * * * *",
        POOLSYNC_EVENT_DEBOUNCE_SECONDS: "1",
        POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
        POOLSYNC_LOCAL_WEBHOOK_KEY: "e2e-webhook-key",
      },
    );
    sim = simClient(`https://127.0.0.1:${simPort}`);
    runtimeUrl = `http://127.0.0.1:${runtime}`;
  });

  afterAll(async () => {
    await local?.interrupt();
  });

  it("prints each function with its trigger and URL, and where Azurite and the simulator are", () => {
    const out = local.lines.join("\n");
    expect(out).toContain(`applyBackendPools: queueTrigger  queue=${queueName} connection=AzureWebJobsStorage`);
    expect(out).toContain(
      `onResourceEvent: eventGridTrigger  ${runtimeUrl}/runtime/webhooks/eventgrid?functionName=onResourceEvent`,
    );
    expect(out).toMatch(/reconcileStale: timerTrigger {2}schedule="\*\/2 \* \* \* \* \*" next=/);
    expect(out).toContain(
      `Azurite: blob http://127.0.0.1:${ports.blob}, queue http://127.0.0.1:${ports.queue}, table http://127.0.0.1:${ports.table} (started, in memory)`,
    );
    expect(out).toContain(`ARM simulator: https://127.0.0.1:${ports.sim} (seed demo`);
    expect(out).toContain(
      `ARM events: simulator → ${runtimeUrl}/runtime/webhooks/eventgrid?functionName=onResourceEvent after 100 ms`,
    );
    expect(out).toContain("Scopes: /subscriptions/11111111-2222-3333-4444-555555555555");
  });

  it("answers the Event Grid validation handshake on the host's webhook path", async () => {
    const res = await fetch(
      `${runtimeUrl}/runtime/webhooks/eventgrid?functionName=onResourceEvent&code=e2e-webhook-key`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "aeg-event-type": "SubscriptionValidation" },
        body: JSON.stringify([
          {
            id: "v1",
            eventType: "Microsoft.EventGrid.SubscriptionValidationEvent",
            data: { validationCode: "e2e-code" },
          },
        ]),
      },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ validationResponse: "e2e-code" });
  });

  it("declare on the queue → writes → ARM events → onResourceEvent knows its own writes", async () => {
    const st = storage(ports);
    await sendMessage(st.queue(queueName), declare("present", "e2e-present"));

    const members = await waitFor(
      "both instances in the pool",
      () => sim.poolMembers(IDS.pool),
      (m) => m.length === 2,
    );
    expect(members.map((m) => m.replace(/^.*virtualMachines\//, ""))).toEqual([
      "0/networkInterfaces/etag-k8s-mp-0-nic-0/ipConfigurations/ipConfig0",
      "1/networkInterfaces/etag-k8s-mp-0-nic-0/ipConfigurations/ipConfig0",
    ]);
    expect(await modelPools(sim)).toEqual({ ipConfig0: [pool] });
    const lb = await sim.loadBalancer(IDS.loadBalancer);
    const lbPool = ((lb.properties as JsonObject).backendAddressPools as JsonObject[]).find(
      (p) => p.name === "etag-k8s",
    ) as JsonObject;
    expect((lbPool.properties as { backendIPConfigurations?: unknown[] }).backendIPConfigurations).toHaveLength(2);

    // The declaration, in Azurite: applied.
    const table = st.table("memberships");
    await waitFor(
      "the declaration's outcome to be applied",
      async () => {
        const rows: Array<Record<string, unknown>> = [];
        // The declaration rows of the targets table (beside each target's control, cache and history rows).
        for await (const r of table.listEntities({ queryOptions: { filter: "RowKey ge '%' and RowKey lt '&'" } }))
          rows.push(r);
        return rows;
      },
      (rows) => rows.length === 1 && rows[0]?.outcomeKind === "applied" && rows[0]?.state === "present",
    );

    // Every write poolsync made (model, two instances) came back as an event, and was recognised as its own.
    const ourWrites = local
      .logs()
      .filter((l) => l.event === "arm.write" && l.outcome === "ok")
      .map((l) => String(l.clientRequestId));
    expect(ourWrites).toHaveLength(3);
    const simEvents = await sim.events();
    for (const id of ourWrites) expect(simEvents.some((e) => e.data.httpRequest.clientRequestId === id)).toBe(true);
    await waitFor(
      "onResourceEvent to see each of our writes as our own",
      () =>
        local
          .logs()
          .filter((l) => l.event === "event" && l.outcome === "own-write")
          .map((l) => String(l.clientRequestId)),
      (own) => ourWrites.every((id) => own.includes(id)),
    );
  });

  it("another writer drops our pool (and adds ipConfig1) → event → invalidation → reconcile → pool back, their change kept", async () => {
    await otherWriterEditsModel(sim, "e2e-other-writer-1", dropPool(IDS.pool), addIpConfig("ipConfig1", IDS.subnet));
    expect(await modelPools(sim)).toEqual({ ipConfig0: [], ipConfig1: [] });

    const invalidated = await waitFor(
      "onResourceEvent to invalidate on the other writer's event",
      () => local.logs().find((l) => l.event === "event" && l.clientRequestId === "e2e-other-writer-1"),
      (l) => l !== undefined,
    );
    expect(String(invalidated?.outcome)).toMatch(/^invalidated/);
    await waitFor(
      "our pool back on ipConfig0, ipConfig1 kept",
      () => modelPools(sim),
      (m) => JSON.stringify(m) === JSON.stringify({ ipConfig0: [pool], ipConfig1: [] }),
    );
    // A reconcile put it back: the event's (enqueued for the debounce window's end), or the timer's, which sees the
    // entry the event marked stale and may get there first. Either way the event's invalidation started it.
    const repair = await waitFor(
      "the repairing reconcile to report",
      () =>
        local
          .logs()
          .find((l) => l.event === "reconcile" && l.result === "applied" && /^(event|timer):/.test(String(l.trigger))),
      (l) => l !== undefined,
    );
    expect(String(repair?.trigger)).toMatch(/^(event: event \S+ ResourceWriteSuccess|timer: observed differs)/);
    repairedAt = local.logs().length;
    // The instances were not touched by the other writer and still hold the pool.
    expect(await instancePools(sim)).toEqual([{ ipConfig0: [pool] }, { ipConfig0: [pool] }]);
    expect(await sim.poolMembers(IDS.pool)).toHaveLength(2);
  });

  it("the timer runs on its schedule and, once the repair has settled, finds nothing left to repair", async () => {
    const all = local.logs().filter((l) => l.event === "reconcileStale");
    expect(all.length).toBeGreaterThanOrEqual(1); // it has been running every 2 s all along
    // Runs that started during the repair may still see drift (and enqueue a harmless extra reconcile): wait for calm.
    const runs = await waitFor(
      "a reconcileStale run with no drift after the repair",
      () =>
        local
          .logs()
          .slice(repairedAt)
          .filter((l) => l.event === "reconcileStale"),
      (r) => r.some((x) => x.driftFound === 0 && x.enqueued === 0),
      10_000,
    );
    expect(runs.at(-1)).toMatchObject({ driftFound: 0, enqueued: 0 });
    expect(await modelPools(sim)).toEqual({ ipConfig0: [pool], ipConfig1: [] });
  });

  it("Ctrl-C drains and stops the runtime, the simulator and the Azurite it started", async () => {
    const code = await local.interrupt();
    expect(code).toBe(0);
    expect(local.lines.some((l) => l.startsWith("SIGINT: stopping"))).toBe(true);
    expect(local.lines.at(-1) ?? local.lines.filter(Boolean).at(-1)).toMatch(/^Stopped/);
    expect(await allClosed([ports.runtime, ports.sim, ports.blob, ports.queue, ports.table])).toBe(true);
  });
});

describe("npm run local --no-events on the suite's Azurite: the timer alone repairs drift", () => {
  let local: LocalProcess;
  let sim: ReturnType<typeof simClient>;
  const names = { queue: uniqueName("e2eq"), memberships: uniqueName("e2em"), cache: uniqueName("e2ec") };
  const azurite = suiteAzuritePorts();

  beforeAll(async () => {
    const [runtime, simPort] = (await freePorts(2)) as [number, number];
    local = await startLocalProcess(
      [
        "--port",
        String(runtime),
        "--sim-port",
        String(simPort),
        "--blob-port",
        String(azurite.blob),
        "--queue-port",
        String(azurite.queue),
        "--table-port",
        String(azurite.table),
        "--no-events",
      ],
      {
        POOLSYNC_QUEUE: names.queue,
        POOLSYNC_MEMBERSHIPS_TABLE: names.memberships,
        POOLSYNC_CACHE_TABLE: names.cache,
        POOLSYNC_RECONCILE_SCHEDULE: "*/2 * * * * *",
        POOLSYNC_CACHE_TTL_SECONDS: "1",
        POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
      },
    );
    sim = simClient(`https://127.0.0.1:${simPort}`);
  });

  afterAll(async () => {
    await local?.interrupt();
  });

  it("reuses the running Azurite and says events are off", () => {
    const out = local.lines.join("\n");
    expect(out).toContain(`queue http://127.0.0.1:${azurite.queue}`);
    expect(out).toContain("(already running, reused)");
    expect(out).toContain("ARM events: off (--no-events)");
  });

  it("declare → applied; another writer drops the pool; no event, yet the timer sees the drift and a reconcile restores it", async () => {
    await sendMessage(storage(azurite).queue(names.queue), declare("present", "e2e-timer"));
    await waitFor(
      "both instances in the pool",
      () => sim.poolMembers(IDS.pool),
      (m) => m.length === 2,
    );

    await otherWriterEditsModel(sim, "e2e-other-writer-2", dropPool(IDS.pool), addIpConfig("ipConfig1", IDS.subnet));
    await waitFor(
      "our pool back on ipConfig0, ipConfig1 kept",
      () => modelPools(sim),
      (m) => JSON.stringify(m) === JSON.stringify({ ipConfig0: [pool], ipConfig1: [] }),
    );

    // The reconcile logs its report after the instances and the outcome: wait for the line, not just the state.
    await waitFor(
      "the timer's reconcile to report",
      () =>
        local
          .logs()
          .find((l) => l.event === "reconcile" && l.result === "applied" && String(l.trigger).startsWith("timer:")),
      (l) => l !== undefined,
    );
    const logs = local.logs();
    expect(logs.filter((l) => l.event === "event")).toEqual([]);
    expect(logs.some((l) => l.event === "reconcileStale" && Number(l.driftFound) >= 1)).toBe(true);
  });

  it("Ctrl-C leaves the Azurite it did not start running", async () => {
    expect(await local.interrupt()).toBe(0);
    expect(await isPortOpen(azurite.queue)).toBe(true);
  });
});
