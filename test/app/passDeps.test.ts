import { describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import { passDeps, type ProcessDeps } from "../../src/app/passDeps";
import { TargetHistoryTable } from "../../src/azure/targets/targetHistory";
import { StoreTargetEvents } from "../../src/azure/targets/targetEvents";
import { StoreTargetPasses } from "../../src/azure/targets/targetPasses";
import type { EventCaller } from "../../src/core/eventCaller";
import type { HistoryEntry } from "../../src/core/history";
import type { ComputePort, NetworkPort } from "../../src/core/ports";
import type { OpenPass } from "../../src/core/targetPasses";
import { WritePacer } from "../../src/pacing/writePacer";
import { LeaseGuard } from "../../src/reconcile/leaseGuard";
import type { PoolDeps } from "../../src/reconcile/reconcileTarget";
import { azuriteConfig } from "../support/appConfig";
import { REF } from "../support/targetPass";
import { targetTableOnAzurite } from "../support/targetTable";

/**
 * What one pass works on, over a real pass of the targets table on Azurite: the process's parts handed on as they
 * are, and the target's open partition behind the doubts, the history and the writers the reconcile sees.
 */
const CALLER: EventCaller = {
  name: undefined,
  id: "oid",
  appId: "app",
  operation: "Microsoft.Network/networkInterfaces/write",
  correlationId: "corr",
  eventId: "",
  at: undefined,
};
const NIC = `${REF.id.split("/providers/")[0]}/providers/Microsoft.Network/networkInterfaces/nic-1`;

async function onePass() {
  const t = await targetTableOnAzurite("passdeps");
  const { clock, store } = t;
  const passes = new StoreTargetPasses(store, t.owners);
  const history = new TargetHistoryTable(store);
  // The real history table; the test keeps each append's promise, to await what the pass does not.
  const appends: Promise<void>[] = [];
  const appending = { append: (id: string, e: HistoryEntry) => (appends.push(history.append(id, e)), appends.at(-1)!) };
  const config = azuriteConfig();
  const process = {
    // Never called here: the ARM edges are the process's, handed to every pass as they are.
    compute: {} as ComputePort,
    network: {} as NetworkPort,
    clock,
    log: memoryLogger(),
    config,
    pacer: new WritePacer(clock.now, false, () => 0),
    newRequestId: (id: string) => `req-${id}`,
  } satisfies ProcessDeps;
  const pools = {} as PoolDeps;
  const lease = new LeaseGuard(clock, 60_000, 5_000, async () => true);
  const depsOf = (open: OpenPass) => passDeps(process, appending, pools, REF.id, lease, open);
  const take = await passes.acquire(REF, "host-1", 60_000, false, true);
  if (take.kind !== "acquired") throw new Error("test bug: the lease of a fresh table is free");
  return {
    t,
    clock,
    config,
    process,
    pools,
    lease,
    pass: take.pass,
    deps: depsOf(take.pass),
    depsOf,
    historyNow: async () => (await Promise.all(appends), (await history.page(REF.id, 10)).entries),
  };
}

describe("passDeps", () => {
  it("hands the process's ARM edges, pacing and settings, the pass's lease and the pools to the pass as they are", async () => {
    const p = await onePass();
    expect(p.deps).toMatchObject({ compute: p.process.compute, network: p.process.network, pacer: p.process.pacer });
    expect(p.deps.config).toBe(p.config);
    expect(p.deps.lease).toBe(p.lease);
    expect(p.deps.pools).toBe(p.pools);
    expect(p.deps.declarations).toBe(p.pass.declarations);
    expect(p.deps.cache).toBe(p.pass.cache);
  });

  it("a write in doubt is kept with the pass's commit; the next pass holds back its resource at that ETag for the rest of writeDoubtMs", async () => {
    const p = await onePass();
    p.deps.doubts!.record({ resourceId: NIC, ifMatch: "W/1", at: p.clock.now() });
    await p.pass.commit((s) => s);
    p.clock.advance(20_000);
    const next = p.depsOf(await p.pass.reopen());
    expect(next.doubts!.remainingMs(NIC, "W/1")).toBe(p.config.writeDoubtMs - 20_000);
    // Another ETag means the resource changed since: the write in doubt can no longer land.
    expect(next.doubts!.remainingMs(NIC, "W/2")).toBe(0);
    p.clock.advance(p.config.writeDoubtMs);
    expect(p.depsOf(await p.pass.reopen()).doubts!.remainingMs(NIC, "W/1")).toBe(0);
  });

  it("a write's history is committed with the pass; a requeued end goes into the target's history at once", async () => {
    const p = await onePass();
    p.deps.events!.emit({
      kind: "write",
      resourceId: NIC,
      resourceKind: "nic",
      ifMatch: "W/1",
      etag: "W/2",
      pools: ["present:/lb/pool-a"],
      outcome: "ok",
      clientRequestId: "req-1",
    });
    expect(await p.historyNow()).toEqual([]);
    await p.pass.commit((s) => s);
    expect(await p.historyNow()).toMatchObject([{ kind: "write", resourceId: NIC, added: ["/lb/pool-a"] }]);

    p.clock.advance(1_000);
    p.deps.events!.emit({ kind: "ended", result: "requeued", reason: "throttled: 429" });
    expect((await p.historyNow()).map((e) => e.kind)).toEqual(["failure", "write"]);
  });

  it("a pass reads a resource's last writer as the events kept it, and records none itself (events see writers)", async () => {
    const p = await onePass();
    await p.t.declare(REF, [{ backendPoolId: "/lb/pool-a" }]);
    const autoscaler = { ...CALLER, name: "autoscaler", eventId: "e-1" };
    await new StoreTargetEvents(p.t.store, p.t.owners).invalidate(
      REF,
      [],
      { resourceId: NIC, caller: autoscaler },
      "event",
      30_000,
    );
    expect(await p.deps.drift!.writers.read(NIC)).toMatchObject({ name: "autoscaler", eventId: "e-1" });
    await p.deps.drift!.writers.record(NIC, { ...CALLER, name: "poolsync", eventId: "e-2" });
    expect(await p.deps.drift!.writers.read(NIC)).toMatchObject({ name: "autoscaler", eventId: "e-1" });
    expect(p.deps.drift!.drifts).toBe(p.pass.drifts);
  });
});
