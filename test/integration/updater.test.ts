import { afterEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

const OTHER_SUB = "99999999-8888-7777-6666-555555555555";

describe("applyBackendPools: coalescing, throttling, scope and bad input", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("applies 20 declarations delivered together with at most 3 scale set writes", async () => {
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 3, pools: 20 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}` },
    });
    const vmss = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
    const pools = Array.from({ length: 20 }, (_, i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));
    await Promise.all(
      pools.map((p) => h!.send({ v: 1, kind: "declare", scaleSetId: vmss, backendPoolId: p, state: "present" })),
    );
    await h.drain({ batchSize: 32 });

    const c = h.sim.control;
    expect(c.stats(vmss).puts + c.stats(vmss).patches).toBeLessThanOrEqual(3);
    const wanted = pools.map((p) => p.toLowerCase()).sort();
    expect([...poolsByIpConfig(modelNics(c.resource(vmss)!)).ipConfig0!].sort()).toEqual(wanted);
    for (const vm of c.instances(vmss))
      expect([...poolsByIpConfig(instanceNics(vm)).ipConfig0!].sort()).toEqual(wanted);
    const decls = await h.services.declarations.listForTarget(scaleSetRef(vmss));
    expect(decls.map((d) => d.outcome.kind)).toEqual(Array(20).fill("applied"));
  });

  it("re-enqueues a throttled reconcile invisible for Retry-After instead of retrying inside the invocation", async () => {
    h = await startHarness();
    const c = h.sim.control;
    c.injectFault({ method: "PUT", path: "virtualMachineScaleSets/etag-k8s-mp-0$", retryAfterSeconds: 30 });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    const started = Date.now();
    const [outcome] = await h.drain();
    expect(Date.now() - started).toBeLessThan(10_000); // 30 s were not slept out

    expect(outcome).toMatchObject({
      result: "reconciled",
      report: { result: "requeued", requeueAfterMs: 30_000, throttles: 1 },
    });
    expect(c.stats()).toMatchObject({ puts: 1, status429: 1, instancePuts: 0 });
    // Exactly one message waits on the queue, and it is not visible yet.
    expect((await h.queue.getProperties()).approximateMessagesCount).toBe(1);
    expect((await h.queue.peekMessages()).peekedMessageItems).toHaveLength(0);
    const enqueued = h.logs.lines.find((l) => l.event === "enqueue");
    expect(enqueued).toMatchObject({ kind: "reconcile", visibilityTimeoutSeconds: 30, attempt: 1 });
    expect(await h.services.problems.list()).toEqual([expect.objectContaining({ result: "requeued", throttles: 1 })]);
  });

  it("a throttled operation poll waits its Retry-After and polls again: the accepted write is not abandoned", async () => {
    h = await startHarness();
    const c = h.sim.control;
    c.injectFault({ method: "GET", path: "/operations/", retryAfterSeconds: 1 });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    const started = Date.now();
    const [outcome] = await h.drain();
    expect(outcome).toMatchObject({ result: "reconciled", report: { result: "applied" } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(c.stats()).toMatchObject({ puts: 1, status429: 1 });
    expect(h.logs.lines.filter((l) => l.event === "enqueue")).toEqual([]);
  });

  it("Retry-After: 0 on an operation means the configured interval, not as fast as latency allows", async () => {
    h = await startHarness({ sim: { operationDurationMs: 400 }, env: { POOLSYNC_OPERATION_POLL_SECONDS: "0.25" } });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.drain();
    const st = h.sim.control.stats();
    const writes = st.puts + st.instancePuts;
    expect(writes).toBeGreaterThan(1);
    // 400 ms operations polled every 250 ms: two polls each (a 25 ms floor would make about ten).
    expect(st.operationGets).toBeLessThanOrEqual(2 * writes);
  });

  it("refuses a scale set or pool outside POOLSYNC_SCOPES with zero ARM calls, to the poison queue with the reason", async () => {
    h = await startHarness();
    const outside = scaleSetId(OTHER_SUB, "rg", "vmss");
    await h.send({ v: 1, kind: "declare", scaleSetId: outside, backendPoolId: DEMO.poolId, state: "present" });
    await h.send({
      v: 1,
      kind: "declare",
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: poolId(OTHER_SUB, "rg", "lb", "p"),
      state: "present",
    });
    await h.drain();
    expect(h.sim.control.stats().requests).toBe(0);
    const reasons = (await h.poisonMessages()).map((m) => m.reason).sort();
    expect(reasons).toEqual([
      `backendPoolId: ${poolId(OTHER_SUB, "rg", "lb", "p")} is outside POOLSYNC_SCOPES`,
      `scaleSetId: ${outside} is outside POOLSYNC_SCOPES`,
    ]);
    expect(await h.services.declarations.listForTarget(scaleSetRef(DEMO.scaleSetId))).toEqual([]);
  });

  it("sends a malformed message to the poison queue at once, with the reason and what was received", async () => {
    h = await startHarness();
    await h.send("{not json");
    await h.send({
      v: 1,
      kind: "declare",
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      state: "present",
      colour: "blue",
    });
    await h.drain();
    const poison = await h.poisonMessages();
    expect(poison.map((p) => [p.reason, p.received])).toEqual([
      ["message is not JSON", "{not json"],
      ["colour: unknown field", expect.stringContaining('"colour":"blue"')],
    ]);
    expect(h.sim.control.stats().requests).toBe(0);
    expect((await h.queue.getProperties()).approximateMessagesCount).toBe(0);
  });
});
