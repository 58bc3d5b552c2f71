import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { targetsOf } from "./support";
import { parseScaleSetId, instanceRef } from "../../src/core/resourceIds";
import type { ScaleSetView } from "../../src/intake/observedState";
import type { StatusReport } from "../../src/intake/statusReport";
import { DEMO } from "../support/harness";
import { json, startIntakeApp, waitFor, type IntakeApp } from "./support";

/**
 * Declared vs observed after a real reconcile: PUT over HTTP, the runtime's own queue trigger reconciles against the
 * ARM simulator, and GET /api/memberships and /api/status tell what happened, from Storage only.
 */

let app: IntakeApp;
const view = async (): Promise<ScaleSetView> =>
  (await (
    await fetch(`${app.url}/api/memberships?scaleSetId=${encodeURIComponent(DEMO.scaleSetId)}`)
  ).json()) as ScaleSetView;
const status = async (q = ""): Promise<StatusReport> =>
  (await (
    await fetch(`${app.url}/api/status${q}`, { headers: { accept: "application/json" } })
  ).json()) as StatusReport;
const etagOf = (id: string) => String(app.sim!.control.resource(id)?.etag);

beforeAll(async () => {
  app = await startIntakeApp({ reconcile: true });
  expect(
    (
      await fetch(
        `${app.url}/api/memberships`,
        json({ scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" }),
      )
    ).status,
  ).toBe(202);
  await waitFor(view, (v) => v.memberships[0]?.outcome.kind === "applied", "the declaration to be applied");
});
afterAll(async () => {
  await app?.stop();
});

describe("GET /api/memberships after a reconcile", () => {
  it("shows the pool declared present and observed present on the model and on every instance, with the ARM ETags", async () => {
    const v = await view();
    expect(v.scaleSetId.toLowerCase()).toBe(DEMO.scaleSetId.toLowerCase());
    expect(v.memberships).toHaveLength(1);
    const m = v.memberships[0]!;
    expect(m).toMatchObject({
      backendPoolId: DEMO.poolId,
      ipConfiguration: null,
      declared: "present",
      sync: "in-sync",
      attempts: 0,
    });
    // The model as our write's answer left it; the instance writes that followed move the scale set's ETag on in
    // ARM, so the reconcile may have marked the cached model stale: then the view must say so, and why.
    expect(m.outcome).toMatchObject({ kind: "applied", appliedEtag: expect.stringMatching(/^"\d+"$/) });
    expect(v.model).toMatchObject({ cached: true, etag: m.outcome.appliedEtag, capacity: 2 });
    expect(m.model).toMatchObject({ state: "present", etag: m.outcome.appliedEtag, stale: v.model.stale });
    if (v.model.stale) expect(v.model.staleReason).toEqual(expect.any(String));
    else expect(v.model.etag).toBe(etagOf(DEMO.scaleSetId));
    expect(m.instances.map((i) => [i.instanceId, i.state, i.etag, i.stale])).toEqual([
      ["0", "present", etagOf(`${DEMO.scaleSetId}/virtualMachines/0`), false],
      ["1", "present", etagOf(`${DEMO.scaleSetId}/virtualMachines/1`), false],
    ]);
    // What ARM holds agrees: both instances are in the pool.
    expect(app.sim!.control.poolMembers(DEMO.poolId)).toHaveLength(2);
    expect(v.observedPools).toEqual([
      {
        nicConfiguration: "etag-k8s-mp-0-nic-0",
        ipConfiguration: "ipConfig0",
        backendPoolId: expect.stringMatching(/etag-k8s$/),
        declared: true,
      },
    ]);
  });

  it("says when an observation is stale (an invalidation marked it) and keeps it as last seen", async () => {
    const ref = parseScaleSetId(DEMO.scaleSetId);
    if (!ref.ok) throw new Error(ref.reason);
    const before = await status();
    await targetsOf(app).cache.markStale(
      instanceRef(ref.value, "1"),
      "event: Microsoft.Resources.ResourceWriteSuccess",
    );
    const m = (await view()).memberships[0]!;
    expect(m.instances.find((i) => i.instanceId === "1")).toMatchObject({
      state: "present",
      stale: true,
      staleReason: "event: Microsoft.Resources.ResourceWriteSuccess",
    });
    expect(m.instances.find((i) => i.instanceId === "0")).toMatchObject({ stale: false });

    const r = await status();
    expect(r.cache).toMatchObject({
      enabled: true,
      rows: 3,
      scaleSets: 1,
      instances: 2,
      stale: before.cache.stale + 1,
      expired: 0,
    });
    expect(before.staleEntries.some((e) => e.instanceId === "1")).toBe(false);
    expect(r.staleEntries).toContainEqual({
      scaleSetId: DEMO.scaleSetId.toLowerCase(),
      instanceId: "1",
      reason: "event: Microsoft.Resources.ResourceWriteSuccess",
      since: expect.any(String),
    });
  });

  it("shows a declaration that cannot be placed as failed, with the reason, and the observed state that proves it", async () => {
    expect(
      (
        await fetch(
          `${app.url}/api/memberships`,
          json({
            scaleSetId: DEMO.scaleSetId,
            backendPoolId: DEMO.poolId,
            ipConfiguration: "ipConfig9",
            state: "present",
          }),
        )
      ).status,
    ).toBe(202);
    const v = await waitFor(
      view,
      (x) => x.memberships.find((m) => m.ipConfiguration === "ipConfig9")?.outcome.kind === "failed",
      "the ipConfig9 declaration to fail",
    );
    const m = v.memberships.find((x) => x.ipConfiguration === "ipConfig9")!;
    expect(m.outcome.reason).toBe('ip configuration "ipConfig9" does not exist');
    expect(m.model).toMatchObject({ state: "absent", note: 'ip configuration "ipConfig9" does not exist' });
    expect(m.sync).toBe("drift");
  });
});

describe("GET /api/status after reconciles", () => {
  it("counts declarations by outcome, and the queue drains to zero", async () => {
    const r = await waitFor(status, (x) => x.queue.depth === 0, "the queue to drain");
    expect(r.declarations).toMatchObject({ total: 2, byState: { present: 2, absent: 0 }, truncated: false });
    expect(r.declarations.byOutcome).toMatchObject({ applied: 1, failed: 1, pending: 0 });
    expect(r.queue.poison).toBe(0);
    expect(r.scaleSets).toHaveLength(1);
    expect(r.scaleSets[0]!.memberships.map((m) => [m.ipConfiguration, m.outcome.kind, m.sync])).toEqual([
      [null, "applied", "in-sync"],
      ["ipConfig9", "failed", "drift"],
    ]);
  });

  it("lists poison messages with the reason when asked (?poison=1), as the queue trigger left them", async () => {
    await app.queue.sendMessage(Buffer.from("this is not JSON <b>", "utf8").toString("base64"));
    const r = await waitFor(
      () => status("?poison=1"),
      // The count and the peek are two reads; a poisoning between them shows in one first, so wait for both.
      (x) => (x.poison ?? []).length === 1 && x.queue.poison === 1,
      "the message to be poisoned",
    );
    expect(r.queue.poison).toBe(1);
    expect(r.poison).toEqual([
      {
        messageId: expect.any(String),
        insertedOn: expect.any(String),
        dequeueCount: expect.any(Number),
        reason: "message is not JSON",
        received: "this is not JSON <b>",
      },
    ]);
    expect((await status()).poison).toBeUndefined();
  });

  it("narrows the per-scale-set view with ?scaleSetId= and refuses one outside the scopes", async () => {
    const other = DEMO.scaleSetId.replace("etag-k8s-mp-0", "nobody-declared-this");
    const r = await status(`?scaleSetId=${encodeURIComponent(other)}`);
    expect(r.scaleSets).toEqual([expect.objectContaining({ scaleSetId: other, memberships: [], observedPools: [] })]);
    expect(r.declarations.total).toBe(2);
    const outside = await fetch(
      `${app.url}/api/status?scaleSetId=${encodeURIComponent(DEMO.scaleSetId.replace(DEMO.subscription, "99999999-2222-3333-4444-555555555555"))}`,
    );
    expect(outside.status).toBe(403);
  });
});
