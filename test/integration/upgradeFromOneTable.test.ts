import { TableClient } from "@azure/data-tables";
import { afterEach, describe, expect, it } from "vitest";
import { testStorageConnectionString } from "../../devkit/storage";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { declarationKey } from "../../src/core/declarations";
import { encodeKey } from "../../src/core/tableKeys";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * An app upgraded in place from the layout before issue 41 (one memberships table of declarations, every other store
 * in the cache table's "~…" partitions and the ETag cache in "%2F…" ones). The rows below are planted as that
 * version's code wrote them (git show a870070^:src/azure/*Table.ts). Declarations are user data: each one keeps its
 * outcome, and is reconciled from what ARM holds; the old history moves to its target; nothing of the old
 * coordination state (a lease a dead host held, a cache row that lies) has any effect, and the timer sweeps it away.
 */

const ref = scaleSetRef(DEMO.scaleSetId);
const OTHER_POOL = DEMO.poolId.replace(/backendAddressPools\/[^/]+$/, "backendAddressPools/old-second");
const T0 = Date.parse("2026-11-20T08:00:00Z");
const OLD_MAX_TIME = 9_999_999_999_999;

/** A declaration row as MembershipTable.rowOf wrote it, with its outcome columns. */
function oldDeclaration(pool: string, state: "present" | "absent", outcome: Record<string, unknown>) {
  const d = { backendPoolId: pool, ipConfiguration: "" };
  return {
    partitionKey: encodeKey(ref.key),
    rowKey: encodeKey(declarationKey(d)),
    scaleSetId: DEMO.scaleSetId,
    backendPoolId: pool,
    ipConfiguration: "",
    state,
    declaredAt: new Date(T0).toISOString(),
    requestId: `old-${state}`,
    declaredById: "11111111-aaaa-bbbb-cccc-000000000001",
    declaredByName: "platform-pipeline",
    declaredVia: "entra",
    attempts: 1,
    outcomeReason: "",
    appliedEtag: "",
    appliedEverywhere: false,
    retryAt: "",
    ...outcome,
  };
}

/** The old shared rows: a far lease of a dead host, a lying cache row, and every other old store's row. */
function oldSharedRows() {
  const pk = encodeKey(ref.key);
  const oldHistoryPk = `~history|${encodeKey(DEMO.scaleSetId.toLowerCase())}`;
  const history = [1, 2, 3].map((i) => ({
    partitionKey: oldHistoryPk,
    rowKey: `${String(OLD_MAX_TIME - (T0 + i * 60_000)).padStart(13, "0")}-0000000${i}`,
    entry: JSON.stringify({ at: new Date(T0 + i * 60_000).toISOString(), kind: "note", text: `old entry ${i}` }),
  }));
  return [
    { partitionKey: "~leases", rowKey: pk, holder: "dead-host", expiresAt: T0 + 10 * 365 * 86_400_000, wanted: false },
    { partitionKey: "~windows", rowKey: pk, openedAt: T0, claimant: "dead-host", leading: true },
    { partitionKey: "~debounce", rowKey: pk, claimedAt: T0 + 10 * 365 * 86_400_000 },
    { partitionKey: "~attempts", rowKey: pk, attempt: 4, nextAt: T0 },
    { partitionKey: "~writers", rowKey: encodeKey(DEMO.scaleSetId.toLowerCase()), caller: "{}" },
    {
      partitionKey: `~drift|${pk}`,
      rowKey: encodeKey(declarationKey({ backendPoolId: DEMO.poolId, ipConfiguration: "" })),
      drift: "{}",
    },
    {
      partitionKey: "~problems",
      rowKey: pk,
      scaleSetId: DEMO.scaleSetId,
      at: new Date(T0).toISOString(),
      result: "failed",
    },
    // The old ETag cache, saying the pool is already on the model: the new app must not believe it.
    { partitionKey: pk, rowKey: "vmss", kind: "scaleSet", resourceId: DEMO.scaleSetId, armEtag: 'W/"old"', readAt: T0 },
    {
      partitionKey: pk,
      rowKey: "vm-0",
      kind: "instance",
      resourceId: `${DEMO.scaleSetId}/virtualMachines/0`,
      readAt: T0,
    },
    ...history,
  ];
}

async function oldRowsLeft(shared: TableClient): Promise<string[]> {
  const left: string[] = [];
  for await (const row of shared.listEntities({ queryOptions: { select: ["PartitionKey", "RowKey"] } }))
    if (!/^~(owners|timer|budgets|census|events|problems$)/.test(row.partitionKey ?? "") || /^%/.test(row.rowKey ?? ""))
      left.push(`${row.partitionKey}/${row.rowKey}`);
  return left;
}

describe("an app upgraded in place from the one-table layout", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  it("keeps every declaration with its outcome, reconciles them from ARM, keeps the history and sweeps the rest", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    const storage = testStorageConnectionString();
    const targets = TableClient.fromConnectionString(storage, h.config.membershipsTable, {
      allowInsecureConnection: true,
    });
    const shared = TableClient.fromConnectionString(storage, h.config.cacheTable, { allowInsecureConnection: true });
    // Applied, the old version said; but ARM does not hold it (someone took it off while no event reached us).
    await targets.createEntity(
      oldDeclaration(DEMO.poolId, "present", { outcomeKind: "applied", outcomeAt: new Date(T0).toISOString() }),
    );
    // A pending one the old version never got to.
    await targets.createEntity(
      oldDeclaration(OTHER_POOL, "absent", { outcomeKind: "pending", outcomeAt: new Date(T0).toISOString() }),
    );
    for (const row of oldSharedRows()) await shared.createEntity(row);

    // Kept as they were, outcomes and callers included, before anything ran.
    const before = await h.services.declarations.listForTarget(ref);
    expect(before.map((d) => [d.backendPoolId, d.state, d.outcome.kind, d.declaredBy.name]).sort()).toEqual(
      [
        [DEMO.poolId, "present", "applied", "platform-pipeline"],
        [OTHER_POOL, "absent", "pending", "platform-pipeline"],
      ].sort(),
    );

    // The timer finds the drift and asks for a reconcile; the old lease, window and debounce hold nothing back.
    clock.advance(11 * 60_000);
    const run = await h.services.reconcileStale();
    expect(run.enqueued).toBeGreaterThanOrEqual(1);
    await h.drainUntilEmpty(60_000);

    const ss = h.sim.control.resource(DEMO.scaleSetId)!;
    const pool = DEMO.poolId.toLowerCase();
    expect(poolsByIpConfig(modelNics(ss)).ipConfig0).toContain(pool);
    for (const vm of h.sim.control.instances(DEMO.scaleSetId))
      expect(poolsByIpConfig(instanceNics(vm)).ipConfig0).toContain(pool);
    const after = await h.services.declarations.listForTarget(ref);
    expect(after.find((d) => d.backendPoolId === DEMO.poolId)?.outcome.kind).toBe("applied");
    expect(after.find((d) => d.backendPoolId === OTHER_POOL)?.outcome.kind).not.toBe("pending");

    // The old history is the target's now, in order, next to what this version wrote.
    const page = await h.services.history.page(DEMO.scaleSetId, 100);
    const old = page.entries.filter((e) => (e.kind as string) === "note").map((e) => (e as { text?: string }).text);
    expect(old).toEqual(["old entry 3", "old entry 2", "old entry 1"]);
    // Nothing of the old layout is left in the shared table, and the old problem row is not reported.
    expect(await oldRowsLeft(shared)).toEqual([]);
    expect((await h.services.problems.list()).filter((p) => p.at === new Date(T0).toISOString())).toEqual([]);

    // Swept once: a later run does not look again.
    h.logs.lines.length = 0;
    clock.advance(11 * 60_000);
    await h.services.reconcileStale();
    expect(h.logs.lines.some((l) => String(l.event).startsWith("timer.old-layout"))).toBe(false);
    expect(
      await shared.getEntity("~timer", "old-layout").then(
        () => true,
        () => false,
      ),
    ).toBe(true);
  });
});
