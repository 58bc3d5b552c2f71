import { HttpRequest } from "@azure/functions";
import type { TableClient } from "@azure/data-tables";
import { afterEach, describe, expect, it } from "vitest";
import { handleStatus } from "../../src/intake/statusHttp";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { eventGridEvent } from "../support/armEventSamples";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * Storage that lies (issue 41): whoever can write the storage account (or a bug, or a clock that jumped) can put any
 * value in any property of any row poolsync keeps. After odd values were written into every property of every row of
 * both tables (bad %-escapes, huge numbers, far-future times, wrong types, oversized strings), poolsync still applies a
 * new declaration on another target, the timer still runs and visits, and the status page still answers.
 */

const VMSS = [0, 1].map((i) => scaleSetId(WIDE_SUBSCRIPTION, "wide", `vmss-${i}`));
const POOLS = [0, 1].map((i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));
const FAR_FUTURE = Date.parse("9999-12-31T00:00:00Z");

/** The odd values, one per property in turn (so every row meets several kinds). */
const GARBAGE: unknown[] = [
  "%ZZ%E0%A4%A",
  9_000_000_000_000_000,
  FAR_FUTURE,
  -1,
  "9999-12-31T23:59:59.999Z",
  true,
  "x".repeat(30_000),
  "{not json",
  '{"seq":-5,"lease":{"holder":"planted","expiresAt":9e15}}',
  "",
];

async function plantEverywhere(table: TableClient): Promise<number> {
  let planted = 0;
  let turn = 0;
  const rows: Array<Record<string, unknown>> = [];
  for await (const row of table.listEntities<Record<string, unknown>>()) rows.push(row);
  for (const row of rows) {
    const entity: Record<string, unknown> = { partitionKey: row.partitionKey, rowKey: row.rowKey };
    for (const [k, v] of Object.entries(row)) {
      if (["partitionKey", "rowKey", "etag", "timestamp", "odata.metadata"].includes(k) || k.includes("@odata"))
        continue;
      // Binary chunks stay binary (the Table refuses a type change of nothing): their bytes are planted instead.
      entity[k] =
        v instanceof Uint8Array ? new Uint8Array([0x1f, 0x8b, 0x08, 0xff, 0xff]) : GARBAGE[turn++ % GARBAGE.length];
      planted++;
    }
    await table.upsertEntity(entity as never, "Replace");
  }
  return planted;
}

describe("storage that lies", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("garbage in every property of every row: another target's new declaration is applied, the timer runs, the page answers", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      cacheEnabled: true,
      sim: { seed: wideWorld({ scaleSets: 2, capacity: 2, pools: 2 }) },
      env: {
        POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`,
        POOLSYNC_EVENT_DEBOUNCE_SECONDS: "0",
        POOLSYNC_AUTH: "key",
      },
    });
    const s = h.services;
    // Every kind of row: a target declared and applied (control, declaration, cache rows, history), another writer's
    // event (a writer row, stale marks), the timer's state, census and budgets, an unheld event, a problem.
    await h.send({ v: 1, kind: "declare", scaleSetId: VMSS[0], backendPoolId: POOLS[0], state: "present" });
    await h.drainUntilEmpty(30_000);
    h.sim.control.settle();
    await s.handleResourceEvent(
      eventGridEvent({
        id: "foreign",
        resourceUri: VMSS[0]!,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      }),
    );
    await s.handleResourceEvent(
      eventGridEvent({
        id: "nobody",
        resourceUri: scaleSetId(WIDE_SUBSCRIPTION, "wide", "made-up"),
        operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      }),
    );
    await h.drainUntilEmpty(30_000);
    clock.advance(h.config.cacheTtlMs + 1);
    await s.reconcileStale();
    await s.problems.record(scaleSetRef(VMSS[0]!), {
      scaleSetId: VMSS[0]!,
      at: new Date(clock.now()).toISOString(),
      result: "failed",
      preconditionFailures: 1,
      throttles: 0,
      reason: "a problem to plant over",
    });

    // Both tables: the targets table and the shared one.
    const planted = (await plantEverywhere(s.store.table)) + (await plantEverywhere(s.unheld.table));
    expect(planted).toBeGreaterThan(50);

    // Another target: declared, applied.
    await h.send({ v: 1, kind: "declare", scaleSetId: VMSS[1], backendPoolId: POOLS[1], state: "present" });
    await h.drainUntilEmpty(30_000);
    h.sim.control.settle();
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(VMSS[1]!)!)).ipConfig0).toContain(POOLS[1]!.toLowerCase());
    // The target whose rows were planted over: a new declaration is applied too (its control row is rebuilt).
    await h.send({ v: 1, kind: "declare", scaleSetId: VMSS[0], backendPoolId: POOLS[1], state: "present" });
    await h.drainUntilEmpty(30_000);
    h.sim.control.settle();
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(VMSS[0]!)!)).ipConfig0).toContain(POOLS[1]!.toLowerCase());

    // The timer runs, and is not put off by a planted time.
    clock.advance(h.config.cacheTtlMs + 1);
    const run = await s.reconcileStale();
    expect(run.skippedUntil).toBeUndefined();
    expect(run.visited).toBeGreaterThan(0);

    // The page answers.
    const page = await handleStatus(
      new HttpRequest({ method: "GET", url: "http://127.0.0.1/api/status?format=json", headers: {} }),
      s,
    );
    expect(page.status).toBe(200);
    expect(h.logs.lines.some((l) => l.event === "storage.row-unusable")).toBe(true);
  }, 120_000);
});
