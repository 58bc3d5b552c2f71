import { gzipSync } from "node:zlib";
import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeModel, MAX_MODEL_JSON_BYTES } from "../../src/azure/modelCodec";
import { CacheRowMac } from "../../src/azure/cacheRowMac";
import { CONTROL_ROW, MODEL_ROW, targetPartition } from "../../src/azure/targets/rowKeys";
import { TargetLeases } from "../../src/azure/targets/targetLeases";
import { TargetStore } from "../../src/azure/targets/targetStore";
import { memoryLogger } from "../../src/app/logger";
import { emptyControl } from "../../src/core/control";
import { parseScaleSetId } from "../../src/core/resourceIds";
import { checkedHandover } from "../../src/reconcile/leaseHandover";
import { modelNics } from "../../sim/wire";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/**
 * Rows poolsync reads back from its table are input: a body planted beside the current ETag is not a write's base,
 * a gzip bomb costs a bounded amount, a far-future lease does not lock a scale set, and a handover restores only
 * the scale set's own buckets. Azurite, the simulator and the real SDK.
 */

describe("a planted cache row cannot steer a write", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ cacheEnabled: true });
  });
  afterAll(async () => {
    await h.stop();
  });

  it("a body copied beside the current ETag is not the base of the next write", async () => {
    const ref = scaleSetRef(DEMO.scaleSetId);
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.drainUntilEmpty(30_000);
    h.sim.control.settle();
    const armEtag = String(h.sim.control.resource(DEMO.scaleSetId)!.etag);

    // The attacker can write the table, not ARM: it edits the cached model, keeps the ETag ARM has now, marks it fresh.
    const table = TableClient.fromConnectionString(testStorageConnectionString(), h.config.membershipsTable, {
      allowInsecureConnection: true,
    });
    const [pk, rk] = [targetPartition(ref), MODEL_ROW];
    const row = await table.getEntity<{ model: string }>(pk, rk);
    // The cache holds the SDK's flattened NIC configurations.
    const model = JSON.parse(row.model) as { etag: string; nics: Array<{ enableIPForwarding?: boolean }> };
    model.etag = armEtag;
    model.nics[0]!.enableIPForwarding = false; // the demo's NIC forwards: the planted body turns it off
    await table.upsertEntity(
      {
        partitionKey: pk,
        rowKey: rk,
        model: JSON.stringify(model),
        modelChunks: 0,
        armEtag,
        stale: false,
        readAt: Date.now(),
      },
      "Merge",
    );

    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "absent" });
    await h.drainUntilEmpty(30_000);
    const written = h.sim.control.resource(DEMO.scaleSetId)!;
    expect(
      (modelNics(written)[0] as { properties?: { enableIPForwarding?: boolean } }).properties?.enableIPForwarding,
    ).toBe(true);
    expect(h.logs.lines.some((e) => e.event === "storage.row-unusable" && /MAC/.test(String(e.reason)))).toBe(true);
  }, 60_000);
});

describe("what a row can cost", () => {
  it("a gzip bomb in the model chunks stops at the bound instead of inflating", () => {
    // Just over the bound of JSON, in a few KiB of gzip (a real bomb is GiBs in the same chunk).
    const bomb = gzipSync(Buffer.from(JSON.stringify("a".repeat(MAX_MODEL_JSON_BYTES + 1024))));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(() => decodeModel({ model: "", modelChunks: 1, model_0: new Uint8Array(bomb) })).toThrow(
      /buffer|larger|length/i,
    );
  });

  it("a planted chunk count is refused, not looped over", () => {
    expect(() => decodeModel({ model: "", modelChunks: 1e9 })).toThrow(/modelChunks/);
  });

  it("a control row with a far-future lease does not hold the target", async () => {
    const table = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("lease"), {
      allowInsecureConnection: true,
    });
    await table.createTable();
    const now = Date.parse("2026-12-02T10:00:00Z");
    const store = new TargetStore(table, {
      now: () => now,
      bounds: { leaseMs: 60_000, maxRequeueMs: 86_400_000, maxDueMs: 3_600_000 },
      mac: new CacheRowMac("trust-test-key-0123456789abcdef"),
      cacheEnabled: true,
      log: memoryLogger(),
    });
    const leases = new TargetLeases(store);
    const ref = scaleSetRef(DEMO.scaleSetId);
    const plant = (lease: { holder: string; expiresAt: number; wanted: boolean; wantedFresh: boolean }) =>
      table.upsertEntity(
        {
          partitionKey: targetPartition(ref),
          rowKey: CONTROL_ROW,
          state: JSON.stringify({ ...emptyControl(), lease: { ...lease, handover: "" } }),
        },
        "Replace",
      );
    await plant({ holder: "planted", expiresAt: now + 10 * 365 * 86_400_000, wanted: true, wantedFresh: true });
    expect((await leases.acquire(ref, "us", 60_000, false, true)).kind).toBe("acquired");
    // A real holder's lease (within its TTL) is still respected.
    await plant({ holder: "other", expiresAt: now + 30_000, wanted: false, wantedFresh: false });
    expect((await leases.acquire(ref, "us", 60_000, false, true)).kind).toBe("held");
  });

  it("a handover restores only the scale set's own buckets, and none closed past a capped Retry-After", () => {
    const now = 1_000_000;
    const mine = parseScaleSetId(DEMO.scaleSetId);
    const other = parseScaleSetId(DEMO.scaleSetId.replace("etag-k8s-mp-0", "prod-mp-0"));
    if (!mine.ok || !other.ok) throw new Error("bad test IDs");
    const text = JSON.stringify({
      [`vmss|${mine.value.key}`]: { tokens: 3, at: now },
      [`vm|${mine.value.key}/virtualmachines/1`]: { tokens: 1, at: now },
      [`vmss|${other.value.key}`]: { tokens: -12, at: now + 3_600_000 },
      [`vm|${mine.value.key}/virtualmachines/2`]: { tokens: 0, at: now + 365 * 86_400_000 },
      [`vm|${mine.value.key}/virtualmachines/3`]: { tokens: "x", at: now },
      ["arm|sub"]: { tokens: -100, at: now },
    });
    expect(checkedHandover(text, mine.value, now)).toEqual({
      [`vmss|${mine.value.key}`]: { tokens: 3, at: now },
      [`vm|${mine.value.key}/virtualmachines/1`]: { tokens: 1, at: now },
    });
  });
});
