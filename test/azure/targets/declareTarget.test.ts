import { odata } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { declareTarget } from "../../../src/azure/targets/declareTarget";
import { CONTROL_ROW, HISTORY_ROWS, targetPartition } from "../../../src/azure/targets/rowKeys";
import type { TargetStore } from "../../../src/azure/targets/targetStore";
import { MAX_DECLARATIONS_PER_SCALE_SET } from "../../../src/core/declarationCap";
import type { Declaration } from "../../../src/core/declarations";
import type { Declared, WindowRequest } from "../../../src/core/targetPasses";
import { freshTargetStore, targetStoreOn } from "../../support/freshTable";
import { manualClock } from "../../support/harness";
import { declared, NOW, REF } from "../../support/targetPass";

const WINDOW: WindowRequest = { windowMs: 30_000, joinableMs: 60_000, quietMs: 10_000 };
const batchOf = (...ds: Declaration[]): Declared[] =>
  ds.map((d) => ({ declaration: d, claimant: `msg-${d.requestId}` }));

async function historyRows(store: TargetStore): Promise<number> {
  let n = 0;
  const pk = targetPartition(REF);
  const filter = odata`PartitionKey eq ${pk} and RowKey ge ${HISTORY_ROWS.from} and RowKey lt ${HISTORY_ROWS.to}`;
  for await (const _ of store.table.listEntities({ queryOptions: { filter } })) n++;
  return n;
}

describe("declareTarget on Azurite", () => {
  it("stores a batch in one write with the control row: the counts moved, a history entry each, the ETags handed back", async () => {
    const store = await freshTargetStore(manualClock(NOW).now);
    const out = await declareTarget(store, REF, batchOf(declared("a"), declared("b")), WINDOW);
    expect(out.results.map((r) => r.result)).toEqual(["created", "created"]);
    expect(out.claim).toBe("leading");
    const after = await store.readTarget(REF);
    expect(after.control.counts).toEqual({ present: 2, absent: 0, byCaller: { c: 2 } });
    expect(after.control.seq).toBe(1);
    expect(after.control.window).toMatchObject({ claimant: "msg-a", leading: true, closed: false });
    const etags = Object.fromEntries(after.declarations.map((d) => [d.requestId, d.rowEtag]));
    expect(out.results.map((r) => "stored" in r && r.stored.rowEtag)).toEqual([etags["a"], etags["b"]]);
    expect(await historyRows(store)).toBe(2);
  });

  it("a redelivery writes nothing but claims its window again; an older declaration of the key claims nothing", async () => {
    const clock = manualClock(NOW);
    const store = await freshTargetStore(clock.now);
    await declareTarget(store, REF, batchOf(declared("a", "r1", 1)), WINDOW);
    const etag = (await store.readControl(REF)).etag;
    clock.advance(1_000);
    const again = await declareTarget(store, REF, batchOf(declared("a", "r1", 1)), WINDOW);
    expect(again).toMatchObject({ results: [{ result: "unchanged" }], claim: "leading" });
    const older = await declareTarget(store, REF, batchOf(declared("a", "r0", 0)), WINDOW);
    expect(older).toMatchObject({ results: [{ result: "older", stored: { requestId: "r1" } }], claim: undefined });
    expect((await store.readControl(REF)).etag).toBe(etag);
    expect((await store.readTarget(REF)).declarations.map((d) => d.requestId)).toEqual(["r1"]);
  });

  it("refuses a present declaration past the target's cap, naming the cap, and stores the batch's absent beside it", async () => {
    const store = await freshTargetStore(manualClock(NOW).now);
    const full = { present: MAX_DECLARATIONS_PER_SCALE_SET, absent: 0, byCaller: {} };
    await store.updateControl(REF, (s) => ({ state: { ...s, counts: full }, result: 0 }));
    const out = await declareTarget(store, REF, batchOf(declared("a"), { ...declared("b"), state: "absent" }), WINDOW);
    expect(out.results[0]).toMatchObject({ result: "refused", cap: "present declarations per target" });
    expect(out.results[0]).toHaveProperty("reason", expect.stringContaining(String(MAX_DECLARATIONS_PER_SCALE_SET)));
    expect(out.results[1]?.result).toBe("created");
    expect((await store.readTarget(REF)).declarations.map((d) => d.requestId)).toEqual(["b"]);
    expect((await store.readControl(REF)).state.counts).toEqual({ ...full, absent: 1 });
  });

  it("a preview answers as storing would and writes nothing", async () => {
    const store = await freshTargetStore(manualClock(NOW).now);
    const out = await declareTarget(store, REF, batchOf(declared("a")), WINDOW, undefined, true);
    expect(out).toMatchObject({ results: [{ result: "created" }], claim: "leading" });
    const after = await store.readTarget(REF);
    expect([after.declarations.length, after.controlEtag]).toEqual([0, undefined]);
  });

  it("hosts declaring on one target at once all land, with the counts exact", async () => {
    const clock = manualClock(NOW);
    const store = await freshTargetStore(clock.now);
    const pools = ["a", "b", "c", "d"];
    await Promise.all(
      pools.map((p) => declareTarget(targetStoreOn(store.table, clock.now), REF, batchOf(declared(p)), undefined)),
    );
    const after = await store.readTarget(REF);
    expect(after.declarations.map((d) => d.requestId).sort()).toEqual(pools);
    expect(after.control.counts.present).toBe(4);
    expect(after.control.seq).toBe(4);
  });

  it("the timer's index hears of the target before its first declaration is stored, and only then", async () => {
    const store = await freshTargetStore(manualClock(NOW).now);
    const heard: number[] = [];
    const index = async () => void heard.push((await store.readTarget(REF)).declarations.length);
    await declareTarget(store, REF, batchOf(declared("a")), undefined, index);
    await declareTarget(store, REF, batchOf(declared("b")), undefined, index);
    expect(heard).toEqual([0]);
  });

  it("counts a torn control row's declarations again from the partition, so the caps still see them", async () => {
    const store = await freshTargetStore(manualClock(NOW).now);
    await declareTarget(store, REF, batchOf(declared("a")), undefined);
    await store.table.updateEntity(
      { partitionKey: targetPartition(REF), rowKey: CONTROL_ROW, state: "{torn" },
      "Merge",
    );
    await declareTarget(store, REF, batchOf(declared("b")), undefined);
    expect((await store.readControl(REF)).state.counts.present).toBe(2);
  });
});
