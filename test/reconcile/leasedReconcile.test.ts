import { TableClient } from "@azure/data-tables";
import { QueueClient } from "@azure/storage-queue";
import { randomUUID } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import { StorageWorkQueue } from "../../src/azure/workQueue";
import { systemClock } from "../../src/app/systemClock";
import { CacheRowMac } from "../../src/azure/cacheRowMac";
import { TargetStore } from "../../src/azure/targets/targetStore";
import { TargetLeases } from "../../src/azure/targets/targetLeases";
import { StoreTargetPasses } from "../../src/azure/targets/targetPasses";
import { CONTROL_ROW } from "../../src/azure/targets/rowKeys";
import { releaseLease, type ControlState } from "../../src/core/control";
import type { OpenPass } from "../../src/core/targetPasses";
import { leasedReconcile, type LeasedDeps, type Settled } from "../../src/reconcile/leasedReconcile";
import type { LeaseGuard } from "../../src/reconcile/leaseGuard";
import type { ReconcileReport, ReconcileTrigger } from "../../src/reconcile/vocabulary";
import { scaleSetRef } from "../support/refs";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

const REF = scaleSetRef(
  "/subscriptions/00000000-0000-0000-0000-00000000000a/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-lease",
);

function report(trigger: ReconcileTrigger): ReconcileReport {
  return {
    targetId: REF.id,
    trigger: trigger.reason,
    result: "applied",
    declarations: 1,
    armReads: 1,
    armWrites: 1,
    preconditionFailures: 0,
    throttles: 0,
    instancesWritten: 0,
    durationMs: 0,
  };
}

type Pass = (t: ReconcileTrigger, lease: LeaseGuard, open: OpenPass) => Promise<ReconcileReport>;
const nothingToSettle = (): Settled => ({ control: (s) => s, after: () => Promise.resolve() });
const run = (trigger: ReconcileTrigger, deps: LeasedDeps, pass: Pass) =>
  leasedReconcile(REF, trigger, deps, pass, nothingToSettle);

/** A pass that waits until the test lets it finish, recording each trigger it ran with. */
function gatedPass() {
  const ran: ReconcileTrigger[] = [];
  const gates: Array<() => void> = [];
  let entered: () => void = () => undefined;
  let enteredOnce = new Promise<void>((r) => (entered = r));
  const pass = async (t: ReconcileTrigger) => {
    ran.push(t);
    entered();
    await new Promise<void>((r) => gates.push(r));
    return report(t);
  };
  return {
    ran,
    pass,
    entered: () => enteredOnce,
    open: () => {
      enteredOnce = new Promise<void>((r) => (entered = r));
      gates.shift()?.();
    },
  };
}

/**
 * A clock that moves only when the test says: `sleep` resolves when `advance` passes its time (or its signal aborts).
 */
function manualClock(start = 1_700_000_000_000) {
  let now = start;
  const waiters: Array<{ at: number; wake: () => void }> = [];
  return {
    now: () => now,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((wake) => {
        if (signal?.aborted) return wake();
        waiters.push({ at: now + ms, wake });
        signal?.addEventListener("abort", () => wake(), { once: true });
      }),
    advance(ms: number) {
      now += ms;
      for (const w of waiters.filter((w) => w.at <= now)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.wake();
      }
    },
  };
}

/** Waits in real time only for storage round trips (well under the real second a wall-clock timer would take). */
const until = async (done: () => boolean) => {
  for (let i = 0; i < 80 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(done()).toBe(true);
};

const storeOf = (table: TableClient, now: () => number) =>
  new TargetStore(table, {
    now,
    bounds: { leaseMs: 60_000, maxRequeueMs: 86_400_000, maxDueMs: 3_600_000 },
    mac: new CacheRowMac("lease-test-key-0123456789abcdef"),
    cacheEnabled: true,
    log: memoryLogger(),
  });

/** The lease's verbs one at a time, as hosts other than the one under test use them. */
function leaseOps(store: TargetStore) {
  const leases = new TargetLeases(store);
  const handles = new Map<string, { state: ControlState; etag: string | undefined }>();
  return {
    async acquire(holder: string, ttlMs: number, fresh = false) {
      const take = await leases.acquire(REF, holder, ttlMs, fresh, true);
      if (take.kind === "acquired") {
        handles.set(holder, take.control);
        return { kind: "acquired" as const };
      }
      return take;
    },
    async renew(holder: string, ttlMs: number) {
      const handle = handles.get(holder) ?? (await store.readControl(REF));
      return leases.renew(REF, holder, ttlMs, handle);
    },
    async release(holder: string, ttlMs: number) {
      const { result } = await store.updateControl(REF, (s) => {
        const r = releaseLease(s, holder, store.now(), ttlMs, undefined);
        return { state: r.state, result: r.again ? { again: true, fresh: r.fresh } : { again: false } };
      });
      return result;
    },
  };
}

describe("leasedReconcile over the lease table (Azurite): one reconcile of a scale set at a time across hosts", () => {
  let table: TableClient;
  let leases: ReturnType<typeof leaseOps>;
  let queue: QueueClient;
  let deps: LeasedDeps;
  const passesOf = (now: () => number) => new StoreTargetPasses(storeOf(table, now));
  const leaseRows = async () => {
    const rows = [];
    for await (const r of table.listEntities<{ state: string }>({
      queryOptions: { filter: `RowKey eq '${CONTROL_ROW}'` },
    }))
      rows.push((JSON.parse(r.state) as ControlState).lease);
    return rows;
  };

  beforeEach(async () => {
    table = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("lease"), {
      allowInsecureConnection: true,
    });
    await table.createTable();
    leases = leaseOps(storeOf(table, Date.now));
    queue = new QueueClient(testStorageConnectionString(), uniqueName("q-"));
    await queue.create();
    deps = {
      passes: passesOf(Date.now),
      queue: new StorageWorkQueue(queue, queue),
      clock: systemClock,
      log: memoryLogger(),
      ttlMs: 60_000,
      writeFlightMs: 30_000,
      newHolderId: randomUUID,
    };
  });

  const queued = async () => {
    const n = (await queue.getProperties()).approximateMessagesCount ?? 0;
    return n;
  };

  it("a host that finds the lease held defers and asks for one more pass; the holder runs it before releasing", async () => {
    const a = gatedPass();
    const first = run({ reason: "host A", attempt: 0 }, deps, a.pass);
    await a.entered();
    const bPasses: ReconcileTrigger[] = [];
    const b = await run({ reason: "host B", attempt: 0, fresh: true }, deps, async (t) => (bPasses.push(t), report(t)));
    const c = await run({ reason: "host C", attempt: 0 }, deps, async (t) => (bPasses.push(t), report(t)));
    expect(b).toMatchObject({ result: "deferred", reason: expect.stringContaining("asked it for one more pass") });
    expect(c).toMatchObject({ result: "deferred", reason: expect.stringContaining("already owes a pass") });
    expect(bPasses).toEqual([]);
    // Only the first to ask leaves a safety-net reconcile, for after the lease would expire.
    expect(await queued()).toBe(1);
    a.open();
    await a.entered();
    expect(a.ran).toEqual([
      { reason: "host A", attempt: 0 },
      { reason: "asked by another host while the lease was held", attempt: 0, fresh: true },
    ]);
    a.open();
    expect(await first).toMatchObject({ result: "applied" });
    // Released: the row has no holder, and the next reconcile takes the lease at once.
    expect((await leaseRows()).map((l) => l.holder)).toEqual([""]);
    const later: ReconcileTrigger[] = [];
    expect(await run({ reason: "later", attempt: 0 }, deps, async (t) => (later.push(t), report(t)))).toMatchObject({
      result: "applied",
    });
    expect(later).toHaveLength(1);
  });

  it("without anyone asking, the holder runs once and lets go", async () => {
    const ran: ReconcileTrigger[] = [];
    await run({ reason: "alone", attempt: 0 }, deps, async (t) => (ran.push(t), report(t)));
    expect(ran).toHaveLength(1);
    expect((await leaseRows()).map((l) => ({ holder: l.holder, wanted: l.wanted }))).toEqual([
      { holder: "", wanted: false },
    ]);
  });

  it("the holder hands what it knows to the next holder with the lease", async () => {
    const seen: string[] = [];
    const handing = (mine: string): LeasedDeps => ({
      ...deps,
      handover: { snapshot: () => mine, restore: (t) => void seen.push(t) },
    });
    await run({ reason: "first", attempt: 0 }, handing("budgets of host A"), async (t) => report(t));
    await run({ reason: "second", attempt: 0 }, handing("budgets of host B"), async (t) => report(t));
    expect(seen).toEqual(["budgets of host A"]);
  });

  it("of many hosts taking the lease at once, exactly one holds it", async () => {
    const takes = await Promise.all(Array.from({ length: 8 }, (_, i) => leases.acquire(`host-${i}`, 60_000)));
    expect(takes.filter((t) => t.kind === "acquired")).toHaveLength(1);
    expect(takes.filter((t) => t.kind === "held" && t.firstToAsk)).toHaveLength(1);
  });

  it("a crashed holder's lease expires: its safety-net message then finds the lease free and the pass runs", async () => {
    const clock = manualClock();
    const timed = leaseOps(storeOf(table, clock.now));
    const sent: Array<{ reason: string; delayMs: number | undefined }> = [];
    const real = new StorageWorkQueue(queue, queue);
    const recording = {
      enqueueReconcile: async (id: string, reason: string, opts: { delayMs?: number } = {}) => {
        sent.push({ reason, delayMs: opts.delayMs });
        await real.enqueueReconcile(id, reason, opts);
      },
    };
    const timedDeps: LeasedDeps = { ...deps, passes: passesOf(clock.now), queue: recording, clock };
    // The dead host took the lease for 1.5 s and never came back.
    expect(await timed.acquire("dead-host", 1500)).toEqual({ kind: "acquired" });
    const ran: ReconcileTrigger[] = [];
    const deferred = await run({ reason: "declare", attempt: 0 }, timedDeps, async (t) => (ran.push(t), report(t)));
    expect(deferred.result).toBe("deferred");
    expect(ran).toEqual([]);
    // The safety net: a reconcile that becomes visible only after the lease's expiry (a second after it).
    expect(sent).toEqual([{ reason: "lease check: declare", delayMs: 2500 }]);
    const now = await queue.receiveMessages({ numberOfMessages: 1 });
    expect(now.receivedMessageItems).toEqual([]);
    clock.advance(2500);
    expect(
      await run({ reason: sent[0]!.reason, attempt: 0 }, timedDeps, async (t) => (ran.push(t), report(t))),
    ).toMatchObject({
      result: "applied",
    });
    expect(ran).toHaveLength(1);
  });

  it("a safety-net message that finds the holder still at work leaves the next one, so a holder that dies later is covered", async () => {
    const clock = manualClock();
    const timed = leaseOps(storeOf(table, clock.now));
    const sent: Array<{ reason: string; delayMs: number | undefined }> = [];
    const recording = {
      enqueueReconcile: async (_id: string, reason: string, opts: { delayMs?: number } = {}) => {
        sent.push({ reason, delayMs: opts.delayMs });
      },
    };
    const timedDeps: LeasedDeps = { ...deps, passes: passesOf(clock.now), queue: recording, clock };
    const never = async (t: ReconcileTrigger) => report(t);
    expect(await timed.acquire("slow-host", 1500)).toEqual({ kind: "acquired" });
    // Another host asks for a pass: the first to ask leaves the safety net.
    await run({ reason: "declare", attempt: 0 }, timedDeps, never);
    expect(sent).toEqual([{ reason: "lease check: declare", delayMs: 2500 }]);
    // The holder renews; the safety net arrives while it still holds the lease (the request is already on the row).
    for (let i = 0; i < 2; i++) {
      clock.advance(1000);
      expect(await timed.renew("slow-host", 1500)).toBe(true);
    }
    clock.advance(500);
    expect(await run({ reason: sent[0]!.reason, attempt: 0 }, timedDeps, never)).toMatchObject({
      result: "deferred",
    });
    // It leaves the next one for after the renewed expiry: if the holder dies now, that one does the pass.
    expect(sent).toEqual([
      { reason: "lease check: declare", delayMs: 2500 },
      { reason: "lease check: declare", delayMs: 2000 },
    ]);
    clock.advance(2000);
    const ran: ReconcileTrigger[] = [];
    expect(
      await run({ reason: sent[1]!.reason, attempt: 0 }, timedDeps, async (t) => (ran.push(t), report(t))),
    ).toMatchObject({
      result: "applied",
    });
    expect(ran).toHaveLength(1);
  });

  it("the holder renews the lease on the injected clock: a pass longer than the lease keeps it", async () => {
    const clock = manualClock();
    const passes = passesOf(clock.now);
    const other = leaseOps(storeOf(table, clock.now));
    let renewed = 0;
    const counting: LeasedDeps["passes"] = {
      acquire: async (...a) => {
        const take = await passes.acquire(...a);
        if (take.kind !== "acquired") return take;
        const renew = take.pass.renew.bind(take.pass);
        return {
          ...take,
          pass: {
            ...take.pass,
            renew: async (ttl: number) => {
              const ok = await renew(ttl);
              renewed++;
              return ok;
            },
          },
        };
      },
      releaseNow: (...a) => passes.releaseNow(...a),
      readControl: (...a) => passes.readControl(...a),
    };
    const timedDeps: LeasedDeps = { ...deps, passes: counting, clock, ttlMs: 3000 };
    let taken: unknown;
    await run({ reason: "long pass", attempt: 0 }, timedDeps, async (t) => {
      if (taken) return report(t); // the pass "other" asked for by finding the lease held
      // Twice the lease's length, in steps of its renewal period (a third of it).
      for (let step = 1; step <= 6; step++) {
        clock.advance(1000);
        await until(() => renewed >= step);
      }
      taken = await other.acquire("other", 3000);
      return report(t);
    });
    expect(taken).toMatchObject({ kind: "held" });
    // Stopped with the pass: time moving on renews nothing more.
    clock.advance(5000);
    await new Promise((r) => setTimeout(r, 50));
    expect(renewed).toBe(6);
  });

  it("a request for another pass made between the holder's last read and its release is not lost", async () => {
    expect(await leases.acquire("holder", 60_000)).toEqual({ kind: "acquired" });
    // Another host asks; the holder's release then sees it, keeps the lease and runs again.
    expect(await leases.acquire("other", 60_000)).toMatchObject({ kind: "held", firstToAsk: true });
    expect(await leases.release("holder", 60_000)).toEqual({ again: true, fresh: false });
    expect(await leases.release("holder", 60_000)).toEqual({ again: false });
    // A holder whose lease expired and was taken over does not release the new holder's lease.
    const clock = manualClock();
    const timed = leaseOps(storeOf(table, clock.now));
    expect(await timed.release("holder", 0)).toEqual({ again: false });
    expect(await timed.acquire("slow", 1)).toEqual({ kind: "acquired" });
    clock.advance(20);
    expect(await timed.acquire("next", 60_000)).toEqual({ kind: "acquired" });
    expect(await timed.renew("slow", 60_000)).toBe(false);
    expect(await timed.release("slow", 60_000)).toEqual({ again: false });
    expect(await timed.acquire("third", 60_000)).toMatchObject({ kind: "held" });
  });

  it("a request for another pass made before the holder renews is not lost at its release", async () => {
    expect(await leases.acquire("holder", 60_000)).toEqual({ kind: "acquired" });
    expect(await leases.acquire("other", 60_000)).toMatchObject({ kind: "held", firstToAsk: true });
    // The renewal meets the request (the row changed since the holder's own write), reads and renews on it.
    expect(await leases.renew("holder", 60_000)).toBe(true);
    // The release must still see the request: the holder runs again instead of letting go.
    expect(await leases.release("holder", 60_000)).toEqual({ again: true, fresh: false });
    expect(await leases.release("holder", 60_000)).toEqual({ again: false });
  });

  it("a pass whose lease was taken over meanwhile writes nothing at its commit", async () => {
    const clock = manualClock();
    // A paused process: its lease renewals never run.
    const frozen = {
      now: clock.now,
      sleep: (ms: number, signal?: AbortSignal) =>
        signal ? new Promise<void>((r) => signal.addEventListener("abort", () => r())) : clock.sleep(ms),
    };
    const timedDeps: LeasedDeps = { ...deps, passes: passesOf(clock.now), clock: frozen, ttlMs: 3000 };
    const other = leaseOps(storeOf(table, clock.now));
    const outcome = await run({ reason: "paused", attempt: 0 }, timedDeps, async (t, _lease, open) => {
      open.recordHistory({ at: new Date(clock.now()).toISOString(), kind: "failure", result: "x", reason: "mine" });
      // Paused past the lease (no renewal ran): another host takes the target.
      clock.advance(10_000);
      expect(await other.acquire("other", 60_000)).toEqual({ kind: "acquired" });
      return report(t);
    });
    expect(outcome).toMatchObject({ result: "applied" });
    const history = [];
    for await (const r of table.listEntities({ queryOptions: { filter: "RowKey ge 'h|' and RowKey lt 'h}'" } }))
      history.push(r.rowKey);
    expect(history).toEqual([]);
    expect((await leaseRows()).map((l) => l.holder)).toEqual(["other"]);
  });

  it("a pass that throws lets go at once, so the retry is not held off for the whole lease", async () => {
    await expect(
      run({ reason: "boom", attempt: 0 }, deps, async () => Promise.reject(new Error("storage down"))),
    ).rejects.toThrow("storage down");
    expect(await leases.acquire("retry", 60_000)).toEqual({ kind: "acquired" });
  });
});

describe("the lease's round trips", () => {
  it("a pass nobody asked about takes the lease with one read and one write, and lets go with one write", async () => {
    const requests: string[] = [];
    const counted = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("lease"), {
      allowInsecureConnection: true,
      additionalPolicies: [
        {
          policy: { name: "count", sendRequest: (req, next) => (requests.push(req.method), next(req)) },
          position: "perCall",
        },
      ],
    });
    await counted.createTable();
    const queue = new QueueClient(testStorageConnectionString(), uniqueName("q-"));
    await queue.create();
    const deps: LeasedDeps = {
      passes: new StoreTargetPasses(storeOf(counted, Date.now)),
      queue: new StorageWorkQueue(queue, queue),
      clock: systemClock,
      log: memoryLogger(),
      ttlMs: 60_000,
      writeFlightMs: 30_000,
      newHolderId: randomUUID,
      handover: { snapshot: () => "budgets", restore: () => undefined },
    };
    requests.length = 0;
    await run({ reason: "first", attempt: 0 }, deps, async (t) => report(t));
    // The partition's read (the control row is not there yet), its create, the release on its ETag.
    expect(requests).toEqual(["GET", "POST", "PUT"]);
    requests.length = 0;
    await run({ reason: "second", attempt: 0 }, deps, async (t) => report(t));
    expect(requests).toEqual(["GET", "PUT", "PUT"]);
    const rows = [];
    for await (const r of counted.listEntities<{ state: string }>())
      rows.push((JSON.parse(r.state) as ControlState).lease);
    expect(rows).toMatchObject([{ holder: "", wanted: false, handover: "budgets" }]);
  });
});
