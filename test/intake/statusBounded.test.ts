import { HttpRequest } from "@azure/functions";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { TableClient, type TableEntity } from "@azure/data-tables";
import { afterEach, describe, expect, it } from "vitest";
import { testStorageConnectionString } from "../../devkit/storage";
import { instanceRowKey, MODEL_ROW, targetPartition } from "../../src/azure/targets/rowKeys";
import { recordCensus } from "../../src/app/recordCensus";
import { handleStatus } from "../../src/intake/statusHttp";
import type { StatusReport } from "../../src/intake/statusReport";
import { DEMO_SUBSCRIPTION } from "../../sim/seed";
import { startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * Issue 26: GET /api/status counted the ETag cache by scanning it, up to 20 000 rows per view. A view now scans at
 * most two pages of it; past that it shows the timer's full census (with its time). Table calls are counted by a
 * pipeline policy on the app's own clients, against Azurite.
 */

const SCALE_SETS = 60;
const PER_SCALE_SET = 100; // the scale set's row and 99 instances: one transaction each
const STALE = 7;

interface Calls {
  lists: number;
  all: number;
}

function counting(table: () => string, calls: Calls): PipelinePolicy {
  return {
    name: "countCacheCalls",
    async sendRequest(request, next) {
      const path = decodeURIComponent(new URL(request.url).pathname);
      if (table() && path.startsWith(`/devstoreaccount1/${table()}`)) {
        calls.all++;
        // A query of the table (no entity key in the path): one page of a scan.
        if (request.method === "GET" && path.endsWith(`/${table()}()`)) calls.lists++;
      }
      return next(request);
    },
  };
}

async function fillCache(h: Harness): Promise<void> {
  const table = TableClient.fromConnectionString(testStorageConnectionString(), h.config.membershipsTable, {
    allowInsecureConnection: true,
  });
  const now = h.services.clock.now();
  await Promise.all(
    Array.from({ length: SCALE_SETS }, async (_, s) => {
      const id = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/big/providers/Microsoft.Compute/virtualMachineScaleSets/big-${s}`;
      const partitionKey = targetPartition(scaleSetRef(id));
      const rows: TableEntity[] = Array.from({ length: PER_SCALE_SET }, (_, i) => ({
        partitionKey,
        rowKey: i === 0 ? MODEL_ROW : instanceRowKey(String(i - 1)),
        resourceId: i === 0 ? id : `${id}/virtualMachines/${i - 1}`,
        readAt: now,
        stale: s < STALE && i === 1,
        ...(s < STALE && i === 1 ? { staleReason: "event e ResourceWriteSuccess", staleAt: now } : {}),
      }));
      await table.submitTransaction(rows.map((r) => ["create", r]));
    }),
  );
}

const status = async (h: Harness): Promise<StatusReport> => {
  const res = await handleStatus(
    new HttpRequest({ method: "GET", url: "http://127.0.0.1/api/status?format=json", headers: {} }),
    h.services,
  );
  expect(res.status).toBe(200);
  return res.jsonBody as StatusReport;
};

describe("GET /api/status over a large cache (Azurite)", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  it("scans a bounded number of pages whatever the cache holds, and shows the timer's full census", async () => {
    const calls: Calls = { lists: 0, all: 0 };
    let table = "";
    h = await startHarness({
      cacheEnabled: true,
      env: { POOLSYNC_AUTH: "key" },
      storagePolicies: [counting(() => table, calls)],
    });
    table = h.config.cacheTable;
    await fillCache(h);
    const rows = SCALE_SETS * PER_SCALE_SET;

    // Before any timer run: a partial count, said to be one.
    calls.lists = calls.all = 0;
    const before = await status(h);
    expect(before.cache).toMatchObject({ truncated: true });
    expect(before.cache.rows).toBeLessThan(rows);
    expect(before.cache.asOf).toBeUndefined();
    // Three pages of the census (1000, 1000 and the one row that says there are more) and the problem log's query.
    expect(calls.lists).toBeLessThanOrEqual(4);

    // The timer counts the whole cache once and saves it; the view shows it, at the same bounded cost.
    const countedAt = new Date(h.services.clock.now()).toISOString();
    await recordCensus(h.services.cache, h.services.censusSummary, {
      clock: h.services.clock,
      log: h.logs,
      ttlMs: h.config.cacheTtlMs,
    });
    calls.lists = calls.all = 0;
    const after = await status(h);
    expect(after.cache).toMatchObject({
      rows,
      scaleSets: SCALE_SETS,
      instances: rows - SCALE_SETS,
      stale: STALE,
      expired: 0,
      truncated: false,
    });
    expect(after.cache.asOf! >= countedAt).toBe(true);

    expect(after.staleEntries).toHaveLength(STALE);
    expect(calls.lists).toBeLessThanOrEqual(4);
    expect(calls.all).toBeLessThanOrEqual(10);

    const page = await handleStatus(
      new HttpRequest({ method: "GET", url: "http://127.0.0.1/api/status?format=html", headers: {} }),
      h.services,
    );
    expect(String(page.body)).toContain(`counted by the timer at ${after.cache.asOf}`);
  });

  it("counts a small cache itself, exactly and live; the timer run saves its census", async () => {
    h = await startHarness({ cacheEnabled: true, env: { POOLSYNC_AUTH: "key" } });
    const vmss = scaleSetRef(
      `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`,
    );
    await h.services.cache.storeScaleSet(vmss, await h.services.compute.getScaleSet(vmss), undefined);
    await h.services.cache.markStale(vmss, "event x");
    const report = await status(h);
    expect(report.cache).toMatchObject({ rows: 1, scaleSets: 1, stale: 1, truncated: false });
    expect(report.cache.asOf).toBeUndefined();

    const started = h.services.clock.now();
    await h.services.reconcileStale();
    const saved = await h.services.censusSummary.read();
    expect(saved?.at).toBeGreaterThanOrEqual(started);
    expect(saved?.census).toMatchObject({ rows: 1, scaleSets: 1 });
  });
});
