import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusReport, type StatusDeps, type StatusOptions } from "../../src/intake/statusReport";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { targetRefOf } from "./requests";

/**
 * src/intake/statusReport.ts: GET /api/status's answer from Storage alone: counts over the whole app, per target the
 * declared vs observed view, the queue and its poison, and the 412s that left a trace. The app's real stores
 * (Azurite) after real passes against the simulator.
 */
const GROUP = DEMO.scaleSetId.replace(/virtualMachineScaleSets\/.*$/, "");
const VM = `${GROUP}virtualMachines/etag-k8s-vm-0`;

describe("statusReport", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ cacheEnabled: true, env: { POOLSYNC_AUTH: "key" } });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.send({ v: 1, kind: "declare", targetId: VM, backendPoolId: DEMO.poolId, state: "present" });
    await h.drainUntilEmpty(30_000);
    await h.services.queue.sendToPoison("{not json", "message is not JSON");
    await h.services.cache.markStale(targetRefOf(DEMO.scaleSetId), "412 on write: another writer changed it");
  });
  afterAll(async () => {
    await h.stop();
  });
  const report = (opts: StatusOptions = {}) => {
    const s = h.services;
    const deps: StatusDeps = {
      declarations: s.declarations,
      cache: s.cache,
      problems: s.problems,
      queue: s.queue,
      now: s.clock.now,
      cacheTtlMs: h.config.cacheTtlMs,
      drifts: s.drifts,
      history: s.history,
    };
    return statusReport(deps, opts);
  };

  it("counts every declaration by outcome and state, and shows each target's view in a stable order", async () => {
    const r = await report();
    expect(r.declarations).toMatchObject({ total: 2, byState: { present: 2, absent: 0 }, truncated: false });
    expect(r.declarations.byOutcome.applied).toBe(2);
    expect(r.scaleSets.map((v) => v.scaleSetId.toLowerCase())).toEqual(
      [DEMO.scaleSetId, VM].map((id) => targetRefOf(id).key).sort(),
    );
    expect(r.scaleSetsTruncated).toBe(false);
    expect(r.queue).toMatchObject({
      name: h.config.queueName,
      depth: 0,
      poisonName: h.config.poisonQueueName,
      poison: 1,
    });
  });

  it("narrows the views to one target while the counts stay global, and says when views were cut", async () => {
    const one = await report({ scaleSet: targetRefOf(VM) });
    expect(one.scaleSets.map((v) => v.scaleSetId)).toEqual([VM]);
    expect(one.declarations.total).toBe(2);
    const cut = await report({ maxScaleSets: 1 });
    expect([cut.scaleSets.length, cut.scaleSetsTruncated]).toEqual([1, true]);
  });

  it("lists the poison messages only when asked, with poolsync's reason", async () => {
    expect((await report()).poison).toBeUndefined();
    expect((await report({ includePoison: true })).poison).toEqual([
      expect.objectContaining({ reason: "message is not JSON", received: "{not json" }),
    ]);
  });

  it("shows a cache row a 412 invalidated among the recent precondition failures, and in the stale entries", async () => {
    const r = await report();
    expect(r.cache).toMatchObject({ enabled: true, stale: 1 });
    expect(r.staleEntries).toEqual([expect.objectContaining({ reason: "412 on write: another writer changed it" })]);
    expect(r.recent.preconditionFailures).toEqual([
      expect.objectContaining({ reason: "412 on write: another writer changed it" }),
    ]);
    expect(r.recent.throttles).toEqual([]);
  });
});
