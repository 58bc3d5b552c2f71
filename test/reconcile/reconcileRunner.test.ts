import { TableClient } from "@azure/data-tables";
import { QueueClient } from "@azure/storage-queue";
import { beforeEach, describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { memoryLogger } from "../../src/app/logger";
import { CacheRowMac } from "../../src/azure/cacheRowMac";
import { ProblemLogTable } from "../../src/azure/problemLogTable";
import { StoreTargetPasses } from "../../src/azure/targets/targetPasses";
import { TargetStore } from "../../src/azure/targets/targetStore";
import { StorageWorkQueue } from "../../src/azure/workQueue";
import {
  INTAKE_DEFER_MAX_MS,
  INTAKE_DEFER_MS,
  INTAKE_DEFER_REASON,
  queueOutcomeOf,
  ReconcileRunner,
  triggerSource,
} from "../../src/reconcile/reconcileRunner";
import type { ReconcileReport, ReconcileTrigger } from "../../src/reconcile/vocabulary";
import { manualClock } from "../support/harness";
import { scaleSetRef } from "../support/refs";

const REF = scaleSetRef(
  "/subscriptions/00000000-0000-0000-0000-00000000004e/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-runner",
);

function report(result: ReconcileReport["result"], extra: Partial<ReconcileReport> = {}): ReconcileReport {
  return {
    targetId: REF.id,
    trigger: "test",
    result,
    declarations: 1,
    armReads: 1,
    armWrites: result === "applied" ? 1 : 0,
    preconditionFailures: 0,
    throttles: 0,
    instancesWritten: 0,
    durationMs: 0,
    ...extra,
  };
}

describe("reconcileRunner: the mapping from a report to the queue (pure)", () => {
  it("a report that asks to come back is requeued after its delay; any other is done", () => {
    expect(queueOutcomeOf(report("requeued", { requeueAfterMs: 7_000 }))).toEqual({
      kind: "requeue-after",
      delayMs: 7_000,
    });
    expect(queueOutcomeOf(report("requeued", { requeueAfterMs: 0 }))).toEqual({ kind: "requeue-after", delayMs: 0 });
    expect(queueOutcomeOf(report("applied"))).toEqual({ kind: "done" });
    expect(queueOutcomeOf(report("failed", { reason: "gave up" }))).toEqual({ kind: "done" });
  });

  it("names what asked for a pass from the reason its producer wrote", () => {
    expect(triggerSource("event ResourceWriteSuccess")).toBe("event");
    expect(triggerSource("timer: stale")).toBe("timer");
    expect(triggerSource("declare present")).toBe("declare");
    expect(triggerSource("retry after: throttled")).toBe("retry");
    expect(triggerSource("events and more")).toBe("other");
  });
});

/**
 * The runner over its real edges: the targets table (Azurite) for the lease and the control row, the queue (Azurite)
 * for requeues, the shared table for the problem log. The reconcile itself is the step under the runner; each test
 * scripts its report, which is what the runner acts on.
 */
describe("reconcileRunner over Azurite: lease, pass, outcome", () => {
  let table: TableClient;
  let problemsTable: TableClient;
  let queueClient: QueueClient;
  let clock: ReturnType<typeof manualClock>;
  let log: ReturnType<typeof memoryLogger>;
  let store: TargetStore;
  let ran: ReconcileTrigger[];
  let next: ReconcileReport;
  let busy: boolean;
  let runner: ReconcileRunner;

  beforeEach(async () => {
    const conn = testStorageConnectionString();
    table = TableClient.fromConnectionString(conn, uniqueName("runner"), { allowInsecureConnection: true });
    problemsTable = TableClient.fromConnectionString(conn, uniqueName("runnerp"), { allowInsecureConnection: true });
    queueClient = new QueueClient(conn, uniqueName("runner-"));
    await Promise.all([table.createTable(), problemsTable.createTable(), queueClient.create()]);
    clock = manualClock();
    log = memoryLogger();
    store = new TargetStore(table, {
      now: clock.now,
      bounds: { leaseMs: 60_000, maxRequeueMs: 86_400_000, maxDueMs: 3_600_000 },
      mac: new CacheRowMac("runner-test-key-0123456789abcdef"),
      cacheEnabled: true,
      log,
    });
    ran = [];
    next = report("applied");
    busy = false;
    let holder = 0;
    runner = new ReconcileRunner({
      reconcile: (_ref, trigger) => {
        ran.push(trigger);
        return Promise.resolve(next);
      },
      passes: new StoreTargetPasses(store),
      queue: new StorageWorkQueue(queueClient, queueClient, log),
      problems: new ProblemLogTable(problemsTable),
      clock,
      log,
      leaseTtlMs: 60_000,
      writeFlightMs: 30_000,
      newHolderId: () => `holder-${++holder}`,
      gatherMs: 250,
      windowMs: 2_000,
      intakeBusy: () => busy,
    });
  });

  const queued = async () => (await queueClient.getProperties()).approximateMessagesCount ?? 0;
  const enqueues = () => log.lines.filter((l) => l.event === "enqueue");

  it("runs the pass under the target's lease, releases it, and sends nothing back for a report that is done", async () => {
    expect(await runner.joined(REF, { reason: "declare present", attempt: 0 })).toMatchObject({ result: "applied" });
    expect(ran).toEqual([{ reason: "declare present", attempt: 0 }]);
    expect(await queued()).toBe(0);
    const control = (await store.readControl(REF)).state;
    expect(control.lease.holder).toBe("");
    expect(control.attempt).toBeUndefined();
  });

  it("joins requests for the same target that arrive together into one pass", async () => {
    const a = runner.joined(REF, { reason: "event one", attempt: 0 });
    const b = runner.joined(REF, { reason: "event two", attempt: 1, fresh: true });
    await Promise.all([a, b]);
    expect(ran).toEqual([{ reason: "event one; event two", attempt: 1, fresh: true }]);
  });

  it("requeues a report that asks to come back: the message with the next attempt, the chain in the control row, the problem logged", async () => {
    next = report("requeued", { requeueAfterMs: 0, throttles: 1, reason: "throttled by CRP" });
    const start = clock.now();
    await runner.run(REF, { reason: "declare present", attempt: 2 });
    expect(await queued()).toBe(1);
    expect(enqueues()).toEqual([
      expect.objectContaining({
        kind: "reconcile",
        scaleSetId: REF.id,
        attempt: 3,
        reason: expect.stringContaining("retry after: throttled by CRP"),
      }),
    ]);
    const control = (await store.readControl(REF)).state;
    expect(control.attempt).toMatchObject({ attempt: 3, nextAttemptAt: start });
    expect(control.lastProblem).toMatchObject({ result: "requeued", throttles: 1, reason: "throttled by CRP" });
    expect(await new ProblemLogTable(problemsTable).list()).toEqual([
      expect.objectContaining({ result: "requeued", throttles: 1, reason: "throttled by CRP" }),
    ]);
  });

  it("a pass that asks nothing more ends a re-enqueued chain in the control row", async () => {
    next = report("requeued", { requeueAfterMs: 0, reason: "pacing: budget" });
    await runner.run(REF, { reason: "declare present", attempt: 0 });
    expect((await store.readControl(REF)).state.attempt).toMatchObject({ attempt: 1 });
    // Our own pacing is the normal flow of a burst: not a problem for the shared log.
    expect(await new ProblemLogTable(problemsTable).list()).toEqual([]);
    next = report("applied");
    await runner.run(REF, { reason: "retry after: pacing: budget", attempt: 1 });
    expect((await store.readControl(REF)).state.attempt).toBeUndefined();
  });

  it("a wait keeps the chain's number (POOLSYNC_MAX_ATTEMPTS counts failures); a chain of waits still ends", async () => {
    next = report("requeued", { requeueAfterMs: 0, reason: "pacing: a read was held", requeueWaits: true });
    await runner.run(REF, { reason: "retry after: throttled", attempt: 3 });
    expect(enqueues()).toEqual([expect.objectContaining({ attempt: 3 })]);
    expect((await store.readControl(REF)).state.attempt).toMatchObject({ attempt: 3 });

    // From a fresh request the chain stays at 0, and its requeued pass that asks nothing more still ends it.
    await runner.run(REF, { reason: "declare present", attempt: 0 });
    expect(enqueues()[1]?.attempt).toBeUndefined();
    expect((await store.readControl(REF)).state.attempt).toMatchObject({ attempt: 0 });
    next = report("applied");
    await runner.run(REF, { reason: "retry after: pacing: a read was held", attempt: 0 });
    expect((await store.readControl(REF)).state.attempt).toBeUndefined();
  });

  it("sends a gathered pass back for a second while its host takes in a backlog, and runs it past the longest deferral", async () => {
    busy = true;
    const first = await runner.joined(REF, { reason: "declare present", attempt: 0 });
    expect(first).toMatchObject({ result: "deferred", reason: INTAKE_DEFER_REASON });
    expect(ran).toEqual([]);
    expect(await queued()).toBe(1);
    expect(enqueues()[0]).toMatchObject({ visibilityTimeoutSeconds: INTAKE_DEFER_MS / 1000 });
    clock.advance(INTAKE_DEFER_MAX_MS);
    expect(await runner.joined(REF, { reason: "declare present", attempt: 0 })).toMatchObject({ result: "applied" });
    expect(ran).toHaveLength(1);
  });

  it("a leading pass does not wait for the backlog: it is the latency of a lone change", async () => {
    busy = true;
    expect(
      await runner.joined(REF, { reason: "declare present", attempt: 0, leading: true, claimedAt: clock.now() }),
    ).toMatchObject({ result: "applied" });
    expect(ran).toHaveLength(1);
  });
});
