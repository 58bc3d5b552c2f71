import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KINDS, KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import { declareOn, targetRef } from "../support/declareOn";
import { startHarness, type Harness } from "../support/harness";

/** One pass over a declared VM: its NIC resources written with If-Match (the real SDKs, the simulator, Azurite). */
const vmRef = targetRef(KINDS.vm(0));

describe("reconcileVm", () => {
  let h: Harness;
  let declare: ReturnType<typeof declareOn>;
  const pass = (attempt = 0) => h.services.reconcile(vmRef, { reason: "test", attempt });
  const outcomeOf = async (pool: string) =>
    (await h.services.declarations.listForTarget(vmRef)).find((d) => d.backendPoolId === pool)?.outcome;
  const members = (pool: string) => h.sim.control.poolMembers(pool).map((m) => m.toLowerCase());
  const nicOf0 = `/subscriptions/${KINDS_SUBSCRIPTION}/resourcegroups/kinds/providers/microsoft.network/networkinterfaces/vm-0-nic`;

  beforeAll(async () => {
    h = await startHarness({
      sim: { seed: poolKindWorld({ vms: 1 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}` },
    });
    declare = declareOn(h, vmRef);
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    h.sim.control.reset({ seed: poolKindWorld({ vms: 1 }) });
    for (const d of await h.services.declarations.listForTarget(vmRef)) await h.services.declarations.remove(vmRef, d);
  });

  it("joins the VM's NIC to the pool and says applied; a second pass writes nothing", async () => {
    await declare(KINDS.nicPool);
    expect(await pass()).toMatchObject({ result: "applied", armWrites: 1 });
    expect(members(KINDS.nicPool).some((m) => m.startsWith(nicOf0))).toBe(true);
    expect(await outcomeOf(KINDS.nicPool)).toMatchObject({ kind: "applied" });
    expect(await pass()).toMatchObject({ result: "unchanged", armWrites: 0 });
  });

  it("a VM ARM no longer has records its declarations as waiting for the target", async () => {
    await declare(KINDS.nicPool);
    h.sim.control.delete(KINDS.vm(0));
    h.sim.control.settle();
    expect(await pass()).toMatchObject({ result: "target-deleted" });
    expect(await outcomeOf(KINDS.nicPool)).toMatchObject({ kind: "target-deleted" });
  });

  it("a pass that gives up fails what it was writing, and leaves a declaration an earlier pass applied applied", async () => {
    await declare(KINDS.nicPool);
    expect(await pass()).toMatchObject({ result: "applied" });
    await declare(KINDS.nicPool2);
    h.sim.control.injectFault({ method: "PUT", path: "networkInterfaces/", retryAfterSeconds: 5, times: Infinity });
    const r = await pass(h.config.maxAttempts);
    h.sim.control.clearFaults();
    expect(r).toMatchObject({ result: "failed", reason: expect.stringContaining("gave up") });
    expect(await outcomeOf(KINDS.nicPool2)).toMatchObject({ kind: "failed" });
    expect(await outcomeOf(KINDS.nicPool)).toMatchObject({ kind: "applied" });
  });
});
