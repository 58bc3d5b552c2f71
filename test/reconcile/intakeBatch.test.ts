import { TableClient } from "@azure/data-tables";
import { QueueClient } from "@azure/storage-queue";
import { beforeEach, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { CacheRowMac } from "../../src/azure/cacheRowMac";
import { declareTarget } from "../../src/azure/targets/declareTarget";
import { TargetStore } from "../../src/azure/targets/targetStore";
import { StorageWorkQueue } from "../../src/azure/workQueue";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import type { TargetRef } from "../../src/core/resourceIds";
import type { Declared, WindowRequest } from "../../src/core/targetPasses";
import { IntakeBatcher, type DeclareRequest } from "../../src/reconcile/intakeBatch";
import { manualClock } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * IntakeBatcher (src/reconcile/intakeBatch.ts): the declarations of one target that reach a process in the same turn
 * go to the targets table as one batch (one transaction with the control row) and are scheduled once. It is what
 * became of the per-partition batcher of the one-table layout (`partitionBatcher`, issue 30), now that a target is a
 * partition. Over Azurite: the targets table and the queue are real.
 */
const SUB = "/subscriptions/00000000-0000-0000-0000-0000000000b4/resourceGroups/rg";
const A = scaleSetRef(`${SUB}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-a`);
const B = scaleSetRef(`${SUB}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-b`);
const pool = (n: number) => `${SUB}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool-${n}`;

describe("IntakeBatcher over Azurite: one batch per target per turn, one pass scheduled for it", () => {
  let table: TableClient;
  let queueClient: QueueClient;
  let store: TargetStore;
  let batches: { target: string; size: number }[];
  let inFlight: number;
  let overlapped: boolean;
  const clock = manualClock();

  beforeEach(async () => {
    const conn = testStorageConnectionString();
    table = TableClient.fromConnectionString(conn, uniqueName("intake"), { allowInsecureConnection: true });
    queueClient = new QueueClient(conn, uniqueName("intake-"));
    await Promise.all([table.createTable(), queueClient.create()]);
    store = new TargetStore(table, {
      now: clock.now,
      bounds: { leaseMs: 60_000, maxRequeueMs: 86_400_000, maxDueMs: 3_600_000 },
      mac: new CacheRowMac("intake-test-key-0123456789abcdef"),
      cacheEnabled: true,
      log: memoryLogger(),
    });
    batches = [];
    inFlight = 0;
    overlapped = false;
  });

  /** The batcher over the real store; each batch it stores is noted (target, size) on its way to the table. */
  const batcher = (windowMs = 0) =>
    new IntakeBatcher(
      {
        declareBatch: async (ref: TargetRef, batch: readonly Declared[], window: WindowRequest | undefined) => {
          batches.push({ target: ref.key, size: batch.length });
          if (++inFlight > 1) overlapped = true;
          try {
            return await declareTarget(store, ref, batch, window);
          } finally {
            inFlight--;
          }
        },
      },
      { queue: new StorageWorkQueue(queueClient, queueClient), windowMs, log: memoryLogger() },
    );

  let n = 0;
  const request = (ref: TargetRef, over: Partial<DeclareRequest> = {}): DeclareRequest => {
    n++;
    const declaration: Declaration = {
      scaleSetId: ref.id,
      backendPoolId: pool(n),
      ipConfiguration: "",
      state: "present",
      declaredAt: new Date(clock.now()).toISOString(),
      requestId: `req-${n}`,
      declaredBy: QUEUE_DECLARER,
    };
    return { ref, declaration, claimant: `msg-${n}`, reason: `declare ${n}`, runsLeading: false, busy: false, ...over };
  };
  const queued = async () => (await queueClient.getProperties()).approximateMessagesCount ?? 0;
  const stored = async (ref: TargetRef) => (await store.readControl(ref)).state.counts.present;

  it("stores one target's declarations of the same turn as one batch, and another target's as its own", async () => {
    const b = batcher();
    const answers = await Promise.all([b.declare(request(A)), b.declare(request(A)), b.declare(request(B))]);
    expect(batches).toEqual([
      { target: A.key, size: 2 },
      { target: B.key, size: 1 },
    ]);
    expect(answers.map((a) => a.result)).toEqual(["created", "created", "created"]);
    expect([await stored(A), await stored(B)]).toEqual([2, 1]);
  });

  it("a turn is the event loop's: declarations made after a few awaits of their caller still share the batch", async () => {
    const b = batcher();
    const first = b.declare(request(A));
    // A queue batch's messages each reach the batcher after their own awaits (decoding, validation).
    for (let i = 0; i < 3; i++) await Promise.resolve();
    await Promise.all([first, b.declare(request(A))]);
    expect(batches).toEqual([{ target: A.key, size: 2 }]);
  });

  it("without a window, the caller that runs a leading pass leads and the rest join it: nothing goes to the queue", async () => {
    const b = batcher();
    const answers = await Promise.all([
      b.declare(request(A)),
      b.declare(request(A, { runsLeading: true })),
      b.declare(request(A, { runsLeading: true })),
    ]);
    expect(answers.map((a) => a.scheduled)).toEqual(["joined", "leading", "joined"]);
    expect(await queued()).toBe(0);
  });

  it("without a window and no caller to lead, one reconcile message is enqueued for the whole batch", async () => {
    const b = batcher();
    const answers = await Promise.all([b.declare(request(A)), b.declare(request(A)), b.declare(request(A))]);
    expect(answers.map((a) => a.scheduled)).toEqual(["scheduled", "joined", "joined"]);
    expect(await queued()).toBe(1);
  });

  it("a redelivered declaration whose pass has not run yet is served again (schedules its pass once more)", async () => {
    const b = batcher();
    const first = request(A);
    await b.declare(first);
    expect(await queued()).toBe(1);
    const again = await b.declare({ ...first, claimant: "msg-redelivered-elsewhere" });
    expect(again).toMatchObject({ result: "unchanged", scheduled: "scheduled" });
    expect(batches).toHaveLength(2);
  });

  it("what arrives while a target's batch is being stored waits for it and goes as the next batch, never alongside", async () => {
    const b = batcher();
    const first = b.declare(request(A));
    await new Promise((r) => setImmediate(r)); // the first batch is on its way to the table
    const later = [b.declare(request(A)), b.declare(request(A))];
    await Promise.all([first, ...later]);
    expect(batches).toEqual([
      { target: A.key, size: 1 },
      { target: A.key, size: 2 },
    ]);
    expect(overlapped).toBe(false);
    expect(await stored(A)).toBe(3);
  });

  it("with a declare window, a quiet target's first batch leads and a busy host's opens the window", async () => {
    const quiet = await batcher(2_000).declare(request(A, { runsLeading: true }));
    expect(quiet.scheduled).toBe("leading");
    expect(await queued()).toBe(0);
    const busy = await batcher(2_000).declare(request(B, { runsLeading: true, busy: true }));
    expect(busy.scheduled).toBe("scheduled");
    expect(await queued()).toBe(1);
  });

  it("a batch the table refuses fails every declaration of it, each caller told", async () => {
    await table.deleteTable();
    const b = batcher();
    const results = await Promise.allSettled([b.declare(request(A)), b.declare(request(A))]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(batches).toEqual([{ target: A.key, size: 2 }]);
  });
});
