import { describe, expect, it } from "vitest";
import { traceChanges } from "../../bench/changeTrace";

const SS =
  "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-1";
const POOL =
  "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/Pool-1";
const ss = SS.toLowerCase();
const pools = [`present:${POOL.toLowerCase()}`];

describe("the latency workload's change timeline", () => {
  it("puts each change's stored, pass, model and last instance write in order, from the lines that name its pool", () => {
    const change = { id: 7, scaleSetId: SS, poolId: POOL, state: "present" as const };
    const other = { id: 8, scaleSetId: SS, poolId: `${POOL}-other`, state: "present" as const };
    const trace = traceChanges(
      [change, other],
      new Map([
        [7, 1_000],
        [8, 1_000],
      ]),
      new Map([
        [7, 9_000],
        [8, 2_000],
      ]),
      [
        { kind: "stored", at: 1_200, scaleSetId: ss, pools },
        { kind: "model written", at: 4_000, scaleSetId: ss, pools },
        { kind: "instance written", at: 6_000, scaleSetId: ss, pools },
        { kind: "instance written", at: 8_500, scaleSetId: ss, pools },
        // Another scale set's write of the same pool is not this change's.
        { kind: "instance written", at: 8_800, scaleSetId: `${ss}-x`, pools },
      ],
      [
        { targetId: ss, startedAt: 500 },
        { targetId: ss, startedAt: 1_500 },
        { targetId: ss, startedAt: 5_000 },
      ],
    );
    expect(trace.slowest[0]).toEqual({
      id: 7,
      scaleSetId: "vmss-1",
      storedMs: 200,
      passStartedMs: 500,
      modelWrittenMs: 3_000,
      lastInstanceWrittenMs: 7_500,
      visibleMs: 8_000,
    });
    expect(trace.slowest[1]).toEqual({ id: 8, scaleSetId: "vmss-1", passStartedMs: 500, visibleMs: 1_000 });
  });
});
