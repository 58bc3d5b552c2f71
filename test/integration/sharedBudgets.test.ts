import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import { createServices, type Services } from "../../src/app/services";
import type { HandleOutcome } from "../../src/reconcile/handleQueueMessage";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { decodeQueueBody } from "../support/queueBody";

const declare = (state: "present" | "absent", i: number) => ({
  v: 1,
  kind: "declare",
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  state,
  requestId: `toggle-${i}`,
});

/** One queue message handled by the given host (a Services of its own: its own pacers, coalescer, memory). */
async function handleOn(h: Harness, host: Services, message: unknown): Promise<HandleOutcome> {
  await h.send(message);
  const got = await h.queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 60 });
  const m = got.receivedMessageItems[0]!;
  const outcome = await host.handleQueueMessage(decodeQueueBody(m.messageText), {
    id: m.messageId,
    dequeueCount: m.dequeueCount,
    insertionTime: m.insertedOn.toISOString(),
  });
  await h.queue.deleteMessage(m.messageId, m.popReceipt);
  return outcome;
}

describe("write budgets shared by hosts (CRP and ARM enforced by the simulator)", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  // CRP's answers name its buckets either way (issue 25): the handover holds under both.
  it.each(["windows", "resourceSubscription"] as const)(
    "a host that takes over a scale set knows the budget the previous host spent on it: no 429, a paced requeue (bucket names: %s)",
    async (names) => {
      h = await startHarness({
        sim: { throttling: true, rateLimitPolicyNames: names },
        env: { POOLSYNC_GATHER_MILLISECONDS: "0" },
      });
      const hostA = h.services;
      const hostB = createServices(h.config, { log: memoryLogger(), random: () => 0.5 });
      // Host A writes the scale set until its pacer holds the next write back (CRP's bucket: 12, then 4 a minute).
      let i = 0;
      for (; i < 20; i++) {
        const o = await handleOn(h, hostA, declare(i % 2 ? "absent" : "present", i));
        if (o.result === "reconciled" && o.report.result === "requeued") break;
      }
      expect(i).toBeLessThan(20);
      const putsByA = h.sim.control.stats(DEMO.scaleSetId).puts;
      // Host B has written nothing itself; the lease hands it what host A spent.
      const o = await handleOn(h, hostB, declare(i % 2 ? "absent" : "present", 100));
      expect(o).toMatchObject({
        result: "reconciled",
        report: { result: "requeued", reason: expect.stringContaining("pacing: write budget") },
      });
      expect(h.sim.control.stats(DEMO.scaleSetId).puts).toBe(putsByA);
      expect(h.sim.control.stats()).toMatchObject({ status429: 0 });
    },
  );

  it("(control) a host that knows nothing of the other's writes runs into CRP's 429", async () => {
    h = await startHarness({ sim: { throttling: true }, env: { POOLSYNC_GATHER_MILLISECONDS: "0" } });
    const hostA = h.services;
    let i = 0;
    for (; i < 20; i++) {
      const o = await handleOn(h, hostA, declare(i % 2 ? "absent" : "present", i));
      if (o.result === "reconciled" && o.report.result === "requeued") break;
    }
    // A third host whose lease row lost the handover (as before budgets were shared): its full local bucket lies.
    await clearHandover(h);
    const hostC = createServices(h.config, { log: memoryLogger(), random: () => 0.5 });
    await handleOn(h, hostC, declare(i % 2 ? "absent" : "present", 100));
    expect(h.sim.control.stats().status429).toBeGreaterThan(0);
  });
});

/** Drops what the last lease holder left in every target's control row (as before budgets were handed over). */
async function clearHandover(h: Harness): Promise<void> {
  const table = h.services.store.table;
  for await (const row of table.listEntities<{ state: string }>({ queryOptions: { filter: "RowKey eq '!control'" } })) {
    const state = JSON.parse(row.state) as { lease: { handover: string } };
    state.lease.handover = "";
    await table.updateEntity(
      { partitionKey: row.partitionKey as string, rowKey: row.rowKey as string, state: JSON.stringify(state) },
      "Merge",
    );
  }
}
