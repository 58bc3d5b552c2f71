import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KINDS, KINDS_RG, KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import { declareOn, targetRef } from "../support/declareOn";
import { startHarness, type Harness } from "../support/harness";

/**
 * A target's pass over every kind of pool: declarations into IP-based pools written on the pool, the others on the
 * target's ip configurations, one report for both (the real SDKs, the simulator, Azurite).
 */
describe("reconcileTarget", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      sim: { seed: poolKindWorld({ vms: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}` },
    });
  });
  afterAll(async () => {
    await h.stop();
  });
  const pass = (id: string) => h.services.reconcile(targetRef(id), { reason: "test", attempt: 0 });
  const outcomes = async (id: string) =>
    Object.fromEntries(
      (await h.services.declarations.listForTarget(targetRef(id))).map((d) => [d.backendPoolId, d.outcome.kind]),
    );

  it("writes an IP-based pool's declaration on the pool and a NIC pool's on the NIC, in one pass with one report", async () => {
    const vm = KINDS.vm(0);
    const declare = declareOn(h, targetRef(vm));
    await declare(KINDS.ipPool);
    await declare(KINDS.nicPool);
    const report = await pass(vm);
    expect(report).toMatchObject({ result: "applied", declarations: 2 });
    expect(report.armWrites).toBeGreaterThanOrEqual(2);
    expect(await outcomes(vm)).toEqual({ [KINDS.ipPool]: "applied", [KINDS.nicPool]: "applied" });
    expect(h.sim.control.poolState(KINDS.ipPool)?.addresses.some((a) => a.ipAddress !== undefined)).toBe(true);
    expect(h.sim.control.poolMembers(KINDS.nicPool).some((m) => /vm-0-nic/i.test(m))).toBe(true);
  });

  it("a target whose only declaration is IP-based writes no NIC", async () => {
    const vm = KINDS.vm(1);
    await declareOn(h, targetRef(vm))(KINDS.ipPool2);
    const nic = `/subscriptions/${KINDS_SUBSCRIPTION}/resourceGroups/${KINDS_RG}/providers/Microsoft.Network/networkInterfaces/vm-1-nic`;
    const nicEtag = () => h.sim.control.resource(nic)?.etag;
    const before = nicEtag();
    expect(before).toBeDefined();
    expect(await pass(vm)).toMatchObject({ result: "applied", declarations: 1 });
    expect(nicEtag()).toBe(before);
    expect(await outcomes(vm)).toEqual({ [KINDS.ipPool2]: "applied" });
  });
});
