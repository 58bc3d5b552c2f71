import { describe, expect, it } from "vitest";
import { burstBound } from "../../bench/workloads";

const one = { scaleSets: 1, capacity: 10, perScaleSet: 50, timeScale: 1 };
const wide = { scaleSets: 50, capacity: 10, perScaleSet: 10, timeScale: 1 };
const latency = { fixedMs: 100, jitterMs: 150 };
const fast = { latency, operationDurationMs: 2000 };
const slow = { latency, operationDurationMs: 2000, scaleSetWriteMs: 30_000, instanceWriteMs: 30_000 };

/**
 * The simulator shows a PUT's body as soon as the PUT is taken (as CRP's GET does while the operation runs), and the
 * benchmark's monitor reads that state: poolsync's burst of 50 showed in 3.7 s against a bound of 4.7 s that counted
 * the last instance write's operation too. The model's operation stays on the path: instance writes wait for it.
 */
describe("the burst bounds", () => {
  it("one scale set: four request latencies and the model's operation", () => {
    expect(burstBound(one, fast, 1000).boundS).toBeCloseTo(2.7, 3);
    expect(burstBound(one, slow, 1000).boundS).toBeCloseTo(30.7, 3);
  });

  it("the wide burst: the path to the first instance write, CRP's instance-write windows (240 per 3 minutes), one latency", () => {
    // 500 instance writes: 240 at once, 240 when the 3-minute window has turned, the last 20 after the next turn
    // (360 s). The first can go only when a model's operation has ended (2 s, or 30 s in the slow profile), so the
    // windows start that late; ARM's write tokens ((50 + 500 − 200) / 10 s) are shorter.
    expect(burstBound(wide, fast, 1000).boundS).toBeCloseTo(362.7, 3);
    expect(burstBound(wide, slow, 1000).boundS).toBeCloseTo(390.7, 3);
    expect(burstBound(wide, fast, 1000).parts.armWrites).toBeCloseTo(35, 3);
    expect(burstBound(wide, slow, 1000).parts.criticalPathS).toBeCloseTo(30.7, 3);
  });
});
