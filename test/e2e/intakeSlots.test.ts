import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueName } from "../../devkit/storage";
import { poolId, scaleSetId, wideWorld } from "../../devkit/worlds";
import { DEMO_SUBSCRIPTION } from "../../sim";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { simClient, startLocalOnOwnStorage, storage, suiteAzuritePorts, waitFor, type LocalProcess } from "./support";

/**
 * Passes waiting for the intake do not hold the queue trigger's slots. Through `npm run local`, with the shipped
 * host.json (a new fetch at 48 messages in flight or fewer): the queue holds a few declarations, then a reconcile for
 * each of 60 scale sets (more than the trigger's slots), then the rest of the burst's declarations. A pass that waited
 * in its invocation for the host's intake to settle held its slot; 56 of them stopped the listener, the intake of the
 * rest stopped, the passes ran on what was stored, and the scale sets declared on both sides of them made a second
 * model write. Sent back to the queue instead, they leave the slots to the intake and each scale set is written once.
 */

const RG = "slots";
const SCALE_SETS = 60;
const EARLY = 8;
const IDS = Array.from({ length: SCALE_SETS }, (_, i) => scaleSetId(DEMO_SUBSCRIPTION, RG, `vmss-${i}`));
const POOL = (i: number) => poolId(DEMO_SUBSCRIPTION, RG, "lb", `pool-${i}`);
/** Every message stays invisible this long after it is sent, so the listener meets the groups in the order sent. */
const HIDDEN_S = 4;

describe("npm run local: passes sent back while the host takes in declarations leave the trigger's slots free", () => {
  let local: LocalProcess;
  let sim: ReturnType<typeof simClient>;
  const tag = uniqueName("slots");
  const queueName = `${tag}q`;

  beforeAll(async () => {
    ({ local, sim } = await startLocalOnOwnStorage(tag));
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

  const modelPools = async (id: string) =>
    [...(poolsByIpConfig(modelNics(await sim.resource(id))).ipConfig0 ?? [])].sort();

  it("a reconcile for each of 60 scale sets queued inside a burst: every scale set written once, with all it declared", async () => {
    const queue = storage(suiteAzuritePorts()).queue(queueName);
    await queue.createIfNotExists();
    const send = (message: unknown) =>
      queue.sendMessage(Buffer.from(JSON.stringify(message), "utf8").toString("base64"), {
        visibilityTimeout: HIDDEN_S,
      });
    const declare = (i: number, pool: number) =>
      send({ v: 1, kind: "declare", scaleSetId: IDS[i], backendPoolId: POOL(pool), state: "present" });
    // Group after group, so that the queue holds the groups in this order; each group's messages together, so that
    // the burst stays a burst on a loaded machine (sent one at a time, its 128 messages took over a second there, the
    // intake fell quiet between them and the early scale sets' passes rightly ran before their second declarations).
    const sendingStarted = Date.now();
    await Promise.all(Array.from({ length: EARLY }, (_, i) => declare(i, 0)));
    await Promise.all(
      IDS.map((id) => send({ v: 1, kind: "reconcile", scaleSetId: id, reason: `gathered: declare ${id}` })),
    );
    await Promise.all([
      ...Array.from({ length: EARLY }, (_, i) => declare(i, 1)),
      ...Array.from({ length: SCALE_SETS - EARLY }, (_, i) => declare(EARLY + i, 0)),
    ]);
    const sendingMs = Date.now() - sendingStarted;

    const wanted = (i: number) => (i < EARLY ? [POOL(0), POOL(1)] : [POOL(0)]).map((p) => p.toLowerCase()).sort();
    await waitFor(
      "every scale set's model holding what it declared",
      async () => await Promise.all(IDS.map(async (id, i) => (await modelPools(id)).join() === wanted(i).join())),
      (ok) => ok.every(Boolean),
      120_000,
    );
    // A model PUT refused with 412 is no write (CRP moves a scale set's ETag seconds after an instance write): what
    // counts is the writes that landed. A second landed write is told with the app's own lines about that scale set,
    // so that a failure says whether a pass ran before the scale set's later declarations were stored.
    const writes = await Promise.all(
      IDS.map(async (id, i) => {
        const [all, instance] = await Promise.all([sim.stats(id), sim.stats(`${id}/virtualMachines/0`)]);
        const refused = (all.status412 ?? 0) - (instance.status412 ?? 0);
        return { i, id, landed: (all.puts ?? 0) - refused, refused };
      }),
    );
    const twice = writes.filter((w) => w.landed !== 1);
    const story = twice.flatMap((w) =>
      local
        .logs()
        .filter((l) => JSON.stringify(l).toLowerCase().includes(w.id.toLowerCase()))
        .map((l) => `vmss-${w.i}: ${String(l.event)} ${String(l.outcome ?? l.result ?? l.reason ?? "")}`),
    );
    expect(
      twice.map((w) => `vmss-${w.i}: ${w.landed} landed, ${w.refused} refused`),
      `model writes per scale set (the burst was sent in ${sendingMs} ms)\n${story.join("\n")}`,
    ).toEqual([]);
  }, 240_000);
});
