import { afterEach, describe, expect, it } from "vitest";
import { armComputeFromConfig } from "../../src/app/services";
import type { RateLimitObservation } from "../../src/pacing/learnWriteBudget";
import type { NicConfiguration } from "../../src/core/networkProfile";
import { instanceRef } from "../../src/core/resourceIds";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * CRP's answers name its buckets either as every public sample does (`<Policy>3Min` / `<Policy>30Min`, the
 * simulator's default) or as earlier recordings did (`<Policy>Resource` / `<Policy>SubscriptionMaximum`): through the
 * real SDK, the Compute edge hands the write pacer what is left either way (issue 25: with only one family read, the
 * write pacer ran blind on the other).
 */

const ref = scaleSetRef(DEMO.scaleSetId);
const withTag = (nics: NicConfiguration[]) =>
  structuredClone(nics).map((n, i) => (i === 0 ? { ...n, enableIPForwarding: !n.enableIPForwarding } : n));

describe("what CRP's write answers say is left, under both naming families", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const cases = [
    {
      names: "windows" as const,
      // The published windows (240 and 1,200 for writes) beside each resource's own bucket.
      scaleSet: [
        ["subscription", 239],
        ["subscription", 1199],
        ["resource", 11],
      ],
      instance: [
        ["subscription", 239],
        ["subscription", 1199],
        ["resource", 11],
      ],
    },
    {
      names: "resourceSubscription" as const,
      scaleSet: [
        ["subscription", 1499],
        ["resource", 11],
      ],
      instance: [
        ["subscription", 1499],
        ["resource", 11],
      ],
    },
  ];
  for (const c of cases) {
    it(`reads the scale set's and an instance's write budgets (${c.names})`, async () => {
      h = await startHarness({ sim: { rateLimitPolicyNames: c.names } });
      const seen: RateLimitObservation[] = [];
      const compute = armComputeFromConfig(
        h.config,
        { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
        undefined,
        (o) => seen.push(o),
      );
      const model = await compute.getScaleSet(ref);
      await compute.writeScaleSetNics(ref, model, withTag(model.nics), {
        ifMatch: model.etag,
        clientRequestId: "rl-1",
      });
      const budget = (kind: string) =>
        seen.filter((o) => o.kind === kind).map((o) => ["scope" in o ? o.scope : "", o.remaining]);
      expect(budget("scaleSetWrites")).toEqual(c.scaleSet);
      const iref = instanceRef(ref, "0");
      const inst = await compute.getInstance(iref);
      await compute.writeInstanceNics(iref, inst, withTag(inst.nics), { ifMatch: inst.etag, clientRequestId: "rl-2" });
      expect(budget("instanceWrites")).toEqual(c.instance);
      // ARM's own counts come along (per principal; the subscription's global count is not paced on).
      expect(seen.some((o) => o.kind === "armWrites")).toBe(true);
    });
  }
});
