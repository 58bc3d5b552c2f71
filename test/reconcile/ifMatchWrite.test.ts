import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import type { TargetCache } from "../../src/azure/targets/targetCache";
import { createServices } from "../../src/app/services";
import type { InstanceModel, ScaleSetModel } from "../../src/core/models";
import type { NicConfiguration } from "../../src/core/networkProfile";
import { instanceRef, type InstanceRef, type ScaleSetRef } from "../../src/core/resourceIds";
import { NotFoundError } from "../../src/core/errors";
import type { PassEvent } from "../../src/core/history";
import { ifMatchWrite, type IfMatchDeps, type IfMatchTarget } from "../../src/reconcile/ifMatchWrite";
import { WritePacer } from "../../src/pacing/writePacer";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * The one If-Match loop, over the real Compute edge against the simulator and the real cache table on Azurite:
 * a 412 re-reads and writes again on the new ETag (the other writer's change kept), too many 412s leave the
 * reconcile to come back, a target that is gone is evicted, and a write the budget cannot take is never sent.
 */

let h: Harness;
const ref = scaleSetRef(DEMO.scaleSetId);
const pool = DEMO.poolId.toLowerCase();
let cache: TargetCache;
let log: ReturnType<typeof memoryLogger>;
let ids = 0;

function withPool(nics: NicConfiguration[]): NicConfiguration[] | undefined {
  const copy = structuredClone(nics) as Array<{
    ipConfigurations?: Array<{ loadBalancerBackendAddressPools?: Array<{ id: string }> }>;
  }>;
  const ipc = copy[0]!.ipConfigurations![0]!;
  if ((ipc.loadBalancerBackendAddressPools ?? []).some((p) => p.id.toLowerCase() === pool)) return undefined;
  ipc.loadBalancerBackendAddressPools = [...(ipc.loadBalancerBackendAddressPools ?? []), { id: DEMO.poolId }];
  return copy as NicConfiguration[];
}

function deps(over: Partial<IfMatchDeps["config"]> = {}, pacer = new WritePacer(() => Date.now())): IfMatchDeps {
  return {
    pacer,
    clock: { now: () => Date.now(), sleep: async () => undefined },
    log,
    newRequestId: () => `crid-${++ids}`,
    random: () => 0.5,
    config: { maxPreconditionRetries: 5, pacingMaxWaitMs: 5_000, ...over },
  };
}

function modelTarget(r: ScaleSetRef): IfMatchTarget<ScaleSetModel, NicConfiguration[]> {
  return {
    paced: r,
    id: r.id,
    resourceKind: "model",
    logFields: { scaleSetId: r.id, target: "model" },
    plan: (m) => {
      const edit = withPool(m.nics);
      return edit ? { edit, pools: [`present:${DEMO.poolId}`] } : undefined;
    },
    write: (m, nics, opts) => h.services.compute.writeScaleSetNics(r, m, nics, opts),
    read: () => h.services.compute.getScaleSet(r),
    row: {
      beginWrite: () => cache.beginWrite(r),
      markStale: (reason) => cache.markStale(r, reason),
      store: (m, base) => cache.storeScaleSet(r, m, base),
      evict: () => cache.evictScaleSet(r),
    },
    context: "test",
  };
}

function instanceTarget(r: InstanceRef): IfMatchTarget<InstanceModel, NicConfiguration[]> {
  return {
    paced: r,
    id: r.id,
    resourceKind: "instance",
    logFields: { scaleSetId: r.scaleSet.id, target: `instance ${r.instanceId}` },
    plan: (m) => {
      const edit = withPool(m.nics);
      return edit ? { edit, pools: [`present:${DEMO.poolId}`] } : undefined;
    },
    write: (m, nics, opts) => h.services.compute.writeInstanceNics(r, m, nics, opts),
    read: () => h.services.compute.getInstance(r),
    row: {
      beginWrite: () => cache.beginWrite(r),
      markStale: (reason) => cache.markStale(r, reason),
      store: (m, base, ours) => cache.storeInstance(r, m, base, ours),
      evict: () => cache.evictInstance(r),
    },
    gone: (err) => err instanceof NotFoundError,
  };
}

const writes = () => log.lines.filter((l) => l.event === "arm.write").map((l) => l.outcome);

beforeAll(async () => {
  h = await startHarness();
  // The cache on, whatever the suite runs with: the loop's rows are what this checks.
  cache = createServices({ ...h.config, cacheEnabled: true }, { log: memoryLogger() }).cache;
});
afterAll(async () => {
  await h.stop();
});
beforeEach(() => {
  h.sim.control.reset({ seed: "demo" });
  log = memoryLogger();
});

describe("ifMatchWrite", () => {
  it("on a 412 re-reads and writes on the new ETag: the other writer's change is kept, the answer cached as ours", async () => {
    const c = h.sim.control;
    let tags = 0;
    c.beforeNextWrite(
      DEMO.scaleSetId,
      (r) => void (r.tags = { ...((r.tags as object | undefined) ?? {}), [`other${++tags}`]: "kept" }),
      { times: 2 },
    );
    const start = await h.services.compute.getScaleSet(ref);
    const events: PassEvent[] = [];
    const result = await ifMatchWrite(modelTarget(ref), start, { ...deps(), events: { emit: (e) => events.push(e) } });

    expect(result.kind).toBe("written");
    expect(writes()).toEqual([expect.stringMatching(/412/), expect.stringMatching(/412/), "ok"]);
    // Each attempt is a typed write event (the history's entries), with the ETag it was sent on and its answer.
    expect(events.map((e) => e.kind === "write" && [e.resourceKind, e.resourceId, e.outcome, e.pools])).toEqual([
      ["model", ref.id, expect.stringMatching(/412/), [`present:${DEMO.poolId}`]],
      ["model", ref.id, expect.stringMatching(/412/), [`present:${DEMO.poolId}`]],
      ["model", ref.id, "ok", [`present:${DEMO.poolId}`]],
    ]);
    const last = events[2]!;
    expect(last.kind === "write" && last.etag).toBe(String(h.sim.control.resource(DEMO.scaleSetId)!.etag));
    expect(last.kind === "write" && last.ifMatch).not.toBe(start.etag);
    const stored = c.resource(DEMO.scaleSetId)!;
    expect(stored.tags).toEqual({ other1: "kept", other2: "kept" });
    expect(poolsByIpConfig(modelNics(stored))).toEqual({ ipConfig0: [pool] });
    const row = await cache.readEntry(ref);
    expect(row).toMatchObject({ stale: false, model: { etag: String(stored.etag) } });
    // Nothing left to write: the loop sends nothing more.
    expect((await ifMatchWrite(modelTarget(ref), await h.services.compute.getScaleSet(ref), deps())).kind).toBe(
      "unchanged",
    );
    expect(writes()).toHaveLength(3);
  });

  it("after maxPreconditionRetries 412s in a row it leaves the reconcile to come back, its reason naming the target", async () => {
    h.sim.control.beforeNextWrite(DEMO.scaleSetId, (r) => void (r.tags = { busy: String(Math.random()) }), {
      times: 10,
    });
    const start = await h.services.compute.getScaleSet(ref);
    const result = await ifMatchWrite(modelTarget(ref), start, deps({ maxPreconditionRetries: 2 }));
    expect(result).toMatchObject({
      kind: "come-back",
      comeBack: { cause: "retry", reason: `3 precondition failures in a row on ${ref.id} (test)` },
    });
    expect(writes()).toHaveLength(3);
  });

  it("an instance scaled in under us is gone: nothing more is written and its cache row is evicted", async () => {
    const iref = instanceRef(ref, "1");
    const vm = await h.services.compute.getInstance(iref);
    await cache.storeInstance(iref, vm, undefined);
    h.sim.control.delete(`${DEMO.scaleSetId}/virtualMachines/1`);
    h.sim.control.settle();
    const result = await ifMatchWrite(instanceTarget(iref), vm, deps());
    expect(result).toEqual({ kind: "gone" });
    expect(await cache.readEntry(iref)).toBeUndefined();
  });

  it("writers woken together by one refill do not all spend its one token: one writes, the others wait again", async () => {
    // The simulator's clock (and any timer wheel) wakes every sleeper due at one instant in one go; a check of the
    // budget and its spending with an await between them let each see the same last token.
    let now = 1_000_000;
    const sleepers: Array<() => void> = [];
    const pacer = new WritePacer(() => now);
    const other = (i: number) => scaleSetRef(DEMO.scaleSetId.replace(/etag-k8s-mp-0$/, `other-${i}`));
    for (let i = 0; pacer.waitMs(other(i)) === 0; i++) pacer.take(other(i));
    const instances = await h.services.compute.listInstances(ref);
    expect(instances.length).toBeGreaterThanOrEqual(2);
    h.sim.control.resetStats();
    const d: IfMatchDeps = {
      ...deps(),
      pacer,
      clock: { now: () => now, sleep: () => new Promise<void>((r) => sleepers.push(r)) },
    };
    const runs = instances.map((vm) => ifMatchWrite(instanceTarget(instanceRef(ref, vm.instanceId)), vm, d));
    const settled = async (n: number) => {
      for (let i = 0; i < 500 && sleepers.length !== n; i++) await new Promise((r) => setTimeout(r, 5));
      expect(sleepers.length).toBe(n);
    };
    await settled(instances.length);
    // One refill step: one token. Every sleeper wakes at once.
    now += 111;
    sleepers.splice(0).forEach((wake) => wake());
    await Promise.race(runs);
    await settled(instances.length - 1);
    expect(h.sim.control.stats().instancePuts).toBe(1);
    // The rest go as the budget refills.
    while (sleepers.length > 0) {
      now += 10_000;
      sleepers.splice(0).forEach((wake) => wake());
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await Promise.all(runs)).every((r) => r.kind === "written")).toBe(true);
  });

  it("a write the budget cannot take soon is never sent: the reconcile comes back when it is there", async () => {
    const pacer = new WritePacer(() => Date.now());
    pacer.throttled(ref, 60_000);
    const start = await h.services.compute.getScaleSet(ref);
    h.sim.control.resetStats();
    const result = await ifMatchWrite(modelTarget(ref), start, deps({}, pacer));
    expect(result).toMatchObject({
      kind: "come-back",
      comeBack: { cause: "wait", reason: expect.stringMatching(/^pacing: write budget of .* is spent for 60 s$/) },
    });
    expect(h.sim.control.stats().puts).toBe(0);
    expect(writes()).toEqual([]);
  });
});
