import { describe, expect, it } from "vitest";
import { DEMO_SUBSCRIPTION } from "../../sim/seed";
import { parseSmokeArgs, SmokeFailure } from "../../scripts/smoke";

// Split from smoke.test.ts, which starts `npm run local` as processes (real waiting): these need none.
const SCALE_SET = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`;

describe("npm run smoke's arguments", () => {
  it("needs the URL, a scale set id and a token (or the local test principal)", () => {
    expect(() => parseSmokeArgs([], {})).toThrow(SmokeFailure);
    expect(() => parseSmokeArgs(["--url", "https://x"], {})).toThrow(/^--scale-set is required/);
    expect(() =>
      parseSmokeArgs(["--url", "https://x", "--scale-set", "/subscriptions/s/resourceGroups/g"], {}),
    ).toThrow(/^--scale-set must be a scale set resource id/);
    expect(() => parseSmokeArgs(["--url", "https://x", "--scale-set", SCALE_SET], {})).toThrow(
      /^POOLSYNC_TOKEN is required/,
    );
    const o = parseSmokeArgs(["--url", "https://x/", "--scale-set", SCALE_SET], {
      POOLSYNC_TOKEN: "t",
      ARM_TOKEN: "a",
    });
    expect(o).toMatchObject({
      url: "https://x",
      armEndpoint: "https://management.azure.com",
      armToken: "a",
      auth: { kind: "bearer", token: "t" },
      timeoutMs: 60_000,
    });
  });
});
