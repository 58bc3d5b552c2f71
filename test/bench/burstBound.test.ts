import { describe, expect, it } from "vitest";
import { burstBound } from "../../bench/workloads";

const wide = { scaleSets: 50, capacity: 10, perScaleSet: 10, timeScale: 1 };
const latency = { fixedMs: 100, jitterMs: 150 };

describe("the wide burst's bound", () => {
  it("is ARM's write tokens plus one latency and a 2 s operation in the default profile", () => {
    // (50 + 500 − 200) / 10 s of write tokens, then the last write's request (175 ms) and operation (2 s).
    expect(burstBound(wide, { latency, operationDurationMs: 2000 }, 1000).boundS).toBeCloseTo(37.175, 3);
  });

  it("counts the slow profile's 30 s scale set and instance writes", () => {
    const slow = { latency, operationDurationMs: 2000, scaleSetWriteMs: 30_000, instanceWriteMs: 30_000 };
    const b = burstBound(wide, slow, 1000);
    // The same tokens, then the last instance write's 30 s operation; the critical path (model then instance) is 60.7 s.
    expect(b.boundS).toBeCloseTo(65.175, 3);
    expect(b.parts.criticalPathS).toBeCloseTo(60.7, 3);
  });
});
