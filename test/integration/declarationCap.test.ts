import { declarationEntity } from "../../src/azure/targets/declarationRows";
import { targetPartition } from "../../src/azure/targets/rowKeys";
import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { MAX_DECLARATIONS_PER_SCALE_SET } from "../../src/core/declarationCap";
import { MAX_DECLARATIONS_PER_CALLER } from "../../src/core/declarationCap";
import { mapLimit } from "../../src/core/retryPolicy";
import { startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/** A partition grown past the cap: the oldest declarations work, the newest beyond it are refused with the reason. */
describe("declarations per scale set", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it(`applies the oldest ${MAX_DECLARATIONS_PER_SCALE_SET} and refuses the rest, saying why`, async () => {
    const n = MAX_DECLARATIONS_PER_SCALE_SET + 3;
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 0, pools: n }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}` },
    });
    const vmss = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
    const ref = scaleSetRef(vmss);
    const t0 = Date.parse("2026-12-01T00:00:00Z");
    // A store an earlier version wrote, whose intake did not count: more rows than the cap, stored as they were.
    await mapLimit(
      Array.from({ length: n }, (_, i) => i),
      16,
      async (i) => {
        const declaredAt = new Date(t0 + i * 1000).toISOString();
        const d = {
          scaleSetId: vmss,
          backendPoolId: poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`),
          ipConfiguration: "",
          state: "present" as const,
          declaredAt,
          requestId: `r-${i}`,
          declaredBy: QUEUE_DECLARER,
        };
        await h!.services.store.table.createEntity(declarationEntity(targetPartition(ref), d, declaredAt) as never);
      },
    );
    expect(await h.services.reconcile(ref, { reason: "test", attempt: 0 })).toMatchObject({ result: "applied" });
    const rows = await h.services.declarations.listForTarget(ref);
    const refused = rows
      .filter((d) => d.outcome.kind === "refused")
      .map((d) => d.requestId)
      .sort();
    expect(refused).toEqual([`r-${n - 3}`, `r-${n - 2}`, `r-${n - 1}`].sort());
    expect(rows.find((d) => d.requestId === `r-${n - 1}`)?.outcome.reason).toBe(
      `the scale set has more than ${MAX_DECLARATIONS_PER_SCALE_SET} declarations; this is one of the newest`,
    );
    expect(rows.filter((d) => d.outcome.kind === "applied")).toHaveLength(MAX_DECLARATIONS_PER_SCALE_SET);
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(vmss)!)).ipConfig0).toHaveLength(
      MAX_DECLARATIONS_PER_SCALE_SET,
    );
  });
});

/**
 * Junk cannot lock a scale set: the cap is enforced at intake, per target and per caller, and an `absent` always
 * passes.
 */
describe("the declaration cap at intake", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("a full target refuses a new present at intake, lets an absent through, and the reconcile never refuses the absent", async () => {
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 0, pools: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}` },
    });
    const vmss = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
    const ref = scaleSetRef(vmss);
    const real = poolId(WIDE_SUBSCRIPTION, "wide", "lb", "pool-0");
    const t0 = Date.parse("2026-12-01T00:00:00Z");
    // Someone filled the target with made-up ip configuration names, each declared by a caller of its own.
    await mapLimit(
      Array.from({ length: MAX_DECLARATIONS_PER_SCALE_SET }, (_, i) => i),
      16,
      async (i) => {
        await h!.services.declarations.upsert(ref, {
          scaleSetId: vmss,
          backendPoolId: real,
          ipConfiguration: `junk-${i}`,
          state: "present",
          declaredAt: new Date(t0 + i * 1000).toISOString(),
          requestId: `junk-${i}`,
          declaredBy: { id: `junk-caller-${i}`, name: "junk", via: "entra" },
        });
      },
    );
    await h.send({
      v: 1,
      kind: "declare",
      scaleSetId: vmss,
      backendPoolId: real,
      ipConfiguration: "ipConfig0",
      state: "present",
    });
    await h.send({
      v: 1,
      kind: "declare",
      scaleSetId: vmss,
      backendPoolId: real,
      ipConfiguration: "cleanup",
      state: "absent",
    });
    await h.drain();
    const poisoned = await h.poisonMessages();
    expect(poisoned.map((p) => p.reason)).toEqual([expect.stringMatching(/holds 200 present declarations/)]);
    // The warning names what was refused, so an operator (and the benchmark's accounting) can tell which change.
    expect(h.logs.lines.filter((l) => l.event === "message.refused")).toEqual([
      expect.objectContaining({ scaleSetId: vmss, backendPoolId: real, state: "present" }),
    ]);
    const rows = await h.services.declarations.listForTarget(ref);
    expect(rows.find((d) => d.ipConfiguration === "ipConfig0")).toBeUndefined();
    expect(rows.find((d) => d.ipConfiguration === "cleanup")?.outcome.kind).not.toBe("refused");
  }, 120_000);

  it(`one caller holds at most ${MAX_DECLARATIONS_PER_CALLER} present declarations of a target`, async () => {
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 0, pools: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}` },
    });
    const vmss = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
    const ref = scaleSetRef(vmss);
    const real = poolId(WIDE_SUBSCRIPTION, "wide", "lb", "pool-0");
    for (let i = 0; i < MAX_DECLARATIONS_PER_CALLER; i++) {
      await h.services.declarations.upsert(ref, {
        scaleSetId: vmss,
        backendPoolId: real,
        ipConfiguration: `mine-${i}`,
        state: "present",
        declaredAt: new Date(Date.parse("2026-12-01T00:00:00Z") + i).toISOString(),
        requestId: `mine-${i}`,
        declaredBy: QUEUE_DECLARER,
      });
    }
    await h.send({
      v: 1,
      kind: "declare",
      scaleSetId: vmss,
      backendPoolId: real,
      ipConfiguration: "one-more",
      state: "present",
    });
    await h.drain();
    expect((await h.poisonMessages()).map((p) => p.reason)).toEqual([
      expect.stringMatching(new RegExp(`caller ${QUEUE_DECLARER.id} holds ${MAX_DECLARATIONS_PER_CALLER}`)),
    ]);
  }, 60_000);
});
