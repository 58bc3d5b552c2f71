import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * POOLSYNC_BINDINGS is checked again before any write: a declaration accepted earlier (the rules narrowed since, or
 * it was written to the table by other means) is refused with the rule's reason, and ARM is not written.
 */
describe("the binding allowlist before a write", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("refuses a stored declaration no rule allows any more, present or absent, without an ARM write", async () => {
    const lb = DEMO.poolId.replace(/\/backendAddressPools\/[^/]+$/, "");
    const rule = `${DEMO.scaleSetId} => ${lb}/backendAddressPools/internal-only`;
    h = await startHarness({ env: { POOLSYNC_BINDINGS: rule } });
    const ref = scaleSetRef(DEMO.scaleSetId);
    for (const state of ["present", "absent"] as const) {
      await h.services.declarations.upsert(ref, {
        scaleSetId: DEMO.scaleSetId,
        backendPoolId: DEMO.poolId,
        ipConfiguration: "",
        state,
        declaredAt: new Date().toISOString(),
        requestId: `r-${state}`,
        declaredBy: QUEUE_DECLARER,
      });
      const report = await h.services.reconcile(ref, { reason: "test", attempt: 0 });
      expect(report).toMatchObject({ result: "refused", armWrites: 0, armReads: 0 });
      const [d] = await h.services.declarations.listForTarget(ref);
      expect(d?.outcome).toMatchObject({
        kind: "refused",
        reason: `refused by POOLSYNC_BINDINGS: ${DEMO.poolId} is not a pool POOLSYNC_BINDINGS lets ${DEMO.scaleSetId} join: rule 1 (${rule}) allows other pools only`,
      });
    }
    expect(h.sim.control.stats()).toMatchObject({ puts: 0 });
  });
});
