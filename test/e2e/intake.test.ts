import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueName } from "../../devkit/storage";
import { poolId, scaleSetId, wideWorld } from "../../devkit/worlds";
import { DEMO_SUBSCRIPTION } from "../../sim";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import {
  sendMessage,
  simClient,
  startLocalOnOwnStorage,
  storage,
  suiteAzuritePorts,
  waitFor,
  type LocalProcess,
} from "./support";

/**
 * The intake does not wait behind passes. Through `npm run local`, with the shipped host.json: a pass of each of 20
 * scale sets holds its queue message while its model write is slow (the simulator delays the first 20 PUTs), and
 * declarations sent meanwhile through the queue are stored before any of those writes is answered. With the host's
 * default threshold of 8 messages in flight, the listener fetched nothing until most of those passes ended, so a
 * burst's last declarations waited in the queue and their scale sets opened second windows (a second model write).
 */

const RG = "intake";
const SCALE_SETS = 20;
const IDS = Array.from({ length: SCALE_SETS }, (_, i) => scaleSetId(DEMO_SUBSCRIPTION, RG, `vmss-${i}`));
const POOL = (i: number) => poolId(DEMO_SUBSCRIPTION, RG, "lb", `pool-${i}`);
const SLOW_WRITE_MS = 20_000;

describe("npm run local: declarations are stored while every scale set's pass runs", () => {
  let local: LocalProcess;
  let sim: ReturnType<typeof simClient>;
  let url = "";
  const tag = uniqueName("intake");
  const queueName = `${tag}q`;

  beforeAll(async () => {
    ({ local, sim, url } = await startLocalOnOwnStorage(tag));
    const seeded = await sim.call(
      "POST",
      "/_sim/seed",
      wideWorld({ subscription: DEMO_SUBSCRIPTION, rg: RG, scaleSets: SCALE_SETS, capacity: 1, pools: 2 }),
    );
    expect(seeded.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await local?.interrupt(60_000);
  });

  const queue = () => storage(suiteAzuritePorts()).queue(queueName);
  const declareAll = (pool: string) =>
    Promise.all(
      IDS.map((id) =>
        sendMessage(queue(), { v: 1, kind: "declare", scaleSetId: id, backendPoolId: pool, state: "present" }),
      ),
    );
  /** The scale sets whose stored declarations include `pool`, as the API lists them. */
  const storedFor = async (pool: string) => {
    const listed = await Promise.all(
      IDS.map(async (id) => {
        const res = await fetch(`${url}/api/memberships?scaleSetId=${encodeURIComponent(id)}`);
        return res.ok && (await res.text()).toLowerCase().includes(pool.toLowerCase());
      }),
    );
    return listed.filter(Boolean).length;
  };
  const modelsHolding = async (pool: string) =>
    (
      await Promise.all(
        IDS.map(async (id) =>
          (poolsByIpConfig(modelNics(await sim.resource(id))).ipConfig0 ?? []).includes(pool.toLowerCase()),
        ),
      )
    ).filter(Boolean).length;

  it("20 passes hold their messages on slow writes; 20 more declarations are stored before any of those writes lands", async () => {
    const slow = await sim.call("POST", "/_sim/faults", {
      method: "PUT",
      path: "/virtualMachineScaleSets/vmss-\\d+$",
      times: SCALE_SETS,
      delayMs: SLOW_WRITE_MS,
    });
    expect(slow.status).toBe(200);
    await declareAll(POOL(0));
    await waitFor(
      "the first declarations stored",
      () => storedFor(POOL(0)),
      (n) => n === SCALE_SETS,
      60_000,
    );
    // Every pass has read its scale set (one GET each) and now waits on its slow PUT, holding its queue message.
    await waitFor(
      "a pass of every scale set reading",
      async () => (await sim.stats()).gets ?? 0,
      (n) => n >= SCALE_SETS,
      60_000,
    );

    await declareAll(POOL(1));
    await waitFor(
      "the second declarations stored",
      () => storedFor(POOL(1)),
      (n) => n === SCALE_SETS,
      60_000,
    );
    // The point: they were stored while the first passes still held their messages, not after.
    expect(await modelsHolding(POOL(0))).toBe(0);

    // And nothing is lost: both pools reach every model, with two model writes at most per scale set.
    await waitFor(
      "both pools on every model",
      async () => Math.min(await modelsHolding(POOL(0)), await modelsHolding(POOL(1))),
      (n) => n === SCALE_SETS,
      90_000,
    );
    // A model PUT refused with 412 is no write: CRP moves the scale set's ETag seconds after an instance write (the
    // first pass's), so a second pass that reaches its model write after that meets it, re-reads and writes once.
    const writes = await Promise.all(
      IDS.map(async (id) => {
        const [all, instance] = await Promise.all([sim.stats(id), sim.stats(`${id}/virtualMachines/0`)]);
        const refused = (all.status412 ?? 0) - (instance.status412 ?? 0);
        return { id: id.split("/").pop(), landed: (all.puts ?? 0) - refused, refused };
      }),
    );
    expect(writes.filter((w) => w.landed < 1 || w.landed > 2 || w.refused > 1)).toEqual([]);
  }, 240_000);
});
