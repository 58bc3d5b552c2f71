import { describe, expect, it } from "vitest";
import { TargetHistoryTable } from "../../../src/azure/targets/targetHistory";
import { HISTORY_MAX_AGE_MS, type HistoryEntry } from "../../../src/core/history";
import { freshTargetStore } from "../../support/freshTable";

const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000462/resourceGroups/rg/providers";
const A = `${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-a`;
const B = `${RG}/Microsoft.Compute/virtualMachines/vm-b`;
const NOW = Date.parse("2026-12-02T10:00:00Z");

const entry = (minute: number): HistoryEntry => ({
  at: new Date(NOW + minute * 60_000).toISOString(),
  kind: "declaration",
  backendPoolId: `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/p${minute}`,
  ipConfiguration: "",
  state: "present",
  by: { id: "caller", via: "queue" },
  requestId: `r${minute}`,
});

describe("TargetHistoryTable on Azurite", () => {
  it("pages a target's history newest first, each page going on where the last stopped", async () => {
    const history = new TargetHistoryTable(await freshTargetStore(() => NOW));
    await history.appendAll(A, [entry(1), entry(3), entry(2)]);
    await history.append(B, entry(4));
    const first = await history.page(A, 2);
    expect(first.entries.map((e) => e.at)).toEqual([entry(3).at, entry(2).at]);
    const second = await history.page(A, 2, first.next);
    expect(second).toEqual({ entries: [entry(1)] });
  });

  it("records nothing for, and shows nothing of, an ID that is no target", async () => {
    const store = await freshTargetStore(() => NOW);
    const history = new TargetHistoryTable(store);
    await history.append("/not/a/target", entry(1));
    expect(await history.page("/not/a/target", 10)).toEqual({ entries: [] });
    let rows = 0;
    for await (const _ of store.table.listEntities()) rows++;
    expect(rows).toBe(0);
  });

  it("prunes entries older than the bound and keeps the young ones", async () => {
    const history = new TargetHistoryTable(await freshTargetStore(() => NOW));
    const old = { ...entry(0), at: new Date(NOW - HISTORY_MAX_AGE_MS - 60_000).toISOString() };
    await history.appendAll(A, [old, entry(1)]);
    expect(await history.prune(NOW)).toBe(1);
    expect((await history.page(A, 10)).entries).toEqual([entry(1)]);
  });

  it("prunes every target's history by one scan of the table, not one query per target", async () => {
    const store = await freshTargetStore(() => NOW);
    const history = new TargetHistoryTable(store);
    const old = { ...entry(0), at: new Date(NOW - HISTORY_MAX_AGE_MS - 60_000).toISOString() };
    const targets = Array.from({ length: 40 }, (_, i) => `${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-${i}`);
    // Half the targets have an entry past the bound, half only young ones.
    await Promise.all(targets.map((t, i) => history.appendAll(t, i % 2 ? [entry(1)] : [old, entry(1)])));
    const reads: string[] = [];
    store.table.pipeline.addPolicy({
      name: "countReads",
      sendRequest: (req, next) => {
        if (req.method === "GET") reads.push(req.url);
        return next(req);
      },
    });
    expect(await history.prune(NOW)).toBe(20);
    // One page holds every history row here: a query per target would be 40 more.
    expect(reads).toHaveLength(1);
    for (const t of targets) expect((await history.page(t, 10)).entries, t).toEqual([entry(1)]);
  });
});
