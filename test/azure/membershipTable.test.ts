import { TableClient } from "@azure/data-tables";
import { beforeEach, describe, expect, it } from "vitest";
import { MembershipTable, REMOVED_RETENTION_MS } from "../../src/azure/membershipTable";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import { scaleSetRef } from "../support/refs";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/**
 * The memberships table on Azurite: idempotent upserts ordered by declaredAt, and outcomes that never clobber a newer
 * declaration.
 */

const SUB = "00000000-1111-2222-3333-444444444444";
const VMSS = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss`;
const POOL = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool`;
const ref = scaleSetRef(VMSS);
const now = () => Date.parse("2026-12-02T10:00:00Z");

const declaration = (over: Partial<Declaration> = {}): Declaration => ({
  scaleSetId: VMSS,
  backendPoolId: POOL,
  ipConfiguration: "",
  state: "present",
  declaredAt: "2026-12-02T09:00:00.000Z",
  requestId: "r-1",
  declaredBy: QUEUE_DECLARER,
  ...over,
});

let table: MembershipTable;
let client: TableClient;
beforeEach(async () => {
  client = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("m"), {
    allowInsecureConnection: true,
  });
  await client.createTable();
  table = new MembershipTable(client, now);
});

describe("MembershipTable", () => {
  it("creates a declaration as pending, and a redelivery of the same request is unchanged", async () => {
    const first = await table.upsert(ref, declaration());
    expect(first.result).toBe("created");
    expect(first.stored.outcome).toEqual({ kind: "pending", at: "2026-12-02T10:00:00.000Z" });
    expect(first.stored.rowEtag).not.toBe("");
    expect((await table.upsert(ref, declaration())).result).toBe("unchanged");
    expect(await table.listForTarget(ref)).toHaveLength(1);
  });

  it("a newer declaration of the same pool replaces it; an older one is ignored", async () => {
    await table.upsert(ref, declaration());
    const newer = await table.upsert(
      ref,
      declaration({ requestId: "r-2", state: "absent", declaredAt: "2026-12-02T09:30:00.000Z" }),
    );
    expect(newer.result).toBe("updated");
    const older = await table.upsert(ref, declaration({ requestId: "r-0", declaredAt: "2026-12-02T08:00:00.000Z" }));
    expect(older.result).toBe("older");
    expect(older.stored.requestId).toBe("r-2");
    expect((await table.listForTarget(ref)).map((d) => [d.requestId, d.state])).toEqual([["r-2", "absent"]]);
  });

  it("the pool's identity is case-insensitive, the ip configuration part of it", async () => {
    await table.upsert(ref, declaration());
    expect(
      (
        await table.upsert(
          ref,
          declaration({ backendPoolId: POOL.toUpperCase(), requestId: "r-2", declaredAt: "2026-12-02T09:10:00.000Z" }),
        )
      ).result,
    ).toBe("updated");
    expect((await table.upsert(ref, declaration({ ipConfiguration: "ipConfig1", requestId: "r-3" }))).result).toBe(
      "created",
    );
    expect(await table.listForTarget(ref)).toHaveLength(2);
  });

  it("records an outcome on the row it read, and loses to a declaration that replaced it meanwhile", async () => {
    const { stored } = await table.upsert(ref, declaration());
    expect(
      await table.recordOutcome(ref, stored, {
        kind: "failed",
        reason: "no such ip configuration",
        at: "2026-12-02T10:01:00.000Z",
        retryAt: "2026-12-02T10:06:00.000Z",
      }),
    ).toBe(true);
    const [failed] = await table.listForTarget(ref);
    expect(failed?.outcome).toEqual({
      kind: "failed",
      reason: "no such ip configuration",
      at: "2026-12-02T10:01:00.000Z",
      retryAt: "2026-12-02T10:06:00.000Z",
    });
    expect(failed?.attempts).toBe(1);

    await table.upsert(ref, declaration({ requestId: "r-2", declaredAt: "2026-12-02T09:30:00.000Z" }));
    // `failed` carries the Table ETag from before the replacement: its outcome must not land on the new declaration.
    expect(
      await table.recordOutcome(ref, failed!, { kind: "applied", appliedEtag: '"7"', at: "2026-12-02T10:02:00.000Z" }),
    ).toBe(false);
    expect((await table.listForTarget(ref))[0]?.outcome.kind).toBe("pending");
  });

  it("removes only the declaration it read", async () => {
    const { stored } = await table.upsert(ref, declaration({ state: "absent" }));
    await table.upsert(ref, declaration({ requestId: "r-2", state: "absent", declaredAt: "2026-12-02T09:30:00.000Z" }));
    expect(await table.remove(ref, stored)).toBe(false);
    const [current] = await table.listForTarget(ref);
    expect(await table.remove(ref, current!)).toBe(true);
    expect(await table.listForTarget(ref)).toEqual([]);
    expect(await table.remove(ref, current!)).toBe(false);
  });

  it("two deliveries of different declarations for one pool at once: the later declaredAt wins", async () => {
    const results = await Promise.all([
      table.upsert(ref, declaration({ requestId: "a", declaredAt: "2026-12-02T09:00:01.000Z" })),
      table.upsert(ref, declaration({ requestId: "b", declaredAt: "2026-12-02T09:00:02.000Z", state: "absent" })),
    ]);
    expect(results.map((r) => r.result).sort()).toContain("created");
    const all = [];
    for await (const d of table.listAll()) all.push(d);
    expect(all.map((d) => d.requestId)).toEqual(["b"]);
  });

  it("a finished absent stays the key's newest after its removal: a late older message cannot bring the pool back", async () => {
    const at = now();
    const clocked = new MembershipTable(client, () => at);
    await clocked.upsert(ref, declaration({ requestId: "present-1", declaredAt: "2026-12-02T09:00:00.000Z" }));
    await clocked.upsert(
      ref,
      declaration({ requestId: "absent-2", state: "absent", declaredAt: "2026-12-02T09:30:00.000Z" }),
    );
    const [finished] = await clocked.listForTarget(ref);
    expect(await clocked.remove(ref, finished!)).toBe(true);
    expect(await clocked.listForTarget(ref)).toEqual([]);

    // The first message again (released after a failed settle, or held in the SDK's retries through an outage).
    const late = await clocked.upsert(
      ref,
      declaration({ requestId: "present-1", declaredAt: "2026-12-02T09:00:00.000Z" }),
    );
    expect(late.result).not.toBe("created");
    const older = await clocked.upsert(
      ref,
      declaration({ requestId: "present-0", declaredAt: "2026-12-02T08:00:00.000Z" }),
    );
    expect(older.result).toBe("older");
    expect(await clocked.listForTarget(ref)).toEqual([]);
    const all = [];
    for await (const d of clocked.listAll()) all.push(d);
    expect(all).toEqual([]);

    // A newer declaration still wins over the mark.
    const newer = await clocked.upsert(
      ref,
      declaration({ requestId: "present-3", declaredAt: "2026-12-02T10:00:00.000Z" }),
    );
    expect(newer.result).toBe("updated");
    expect((await clocked.listForTarget(ref)).map((d) => d.requestId)).toEqual(["present-3"]);
  });

  it("a removal mark is dropped once no older message can arrive (the queue's 7 days)", async () => {
    let at = now();
    const clocked = new MembershipTable(client, () => at);
    const { stored } = await clocked.upsert(ref, declaration({ state: "absent" }));
    expect(await clocked.remove(ref, stored)).toBe(true);
    at += REMOVED_RETENTION_MS + 1;
    // A reader (GET /api/status) makes no writes: the mark stays until the timer's listing purges it.
    for await (const d of clocked.listAll()) expect(d).toBeUndefined();
    const kept = [];
    for await (const r of client.listEntities()) kept.push(r);
    expect(kept).toHaveLength(1);
    for await (const d of clocked.listAll({ purge: true })) expect(d).toBeUndefined();
    const rows = [];
    for await (const r of client.listEntities()) rows.push(r);
    expect(rows).toEqual([]);
  });
});

/** A table of its own whose every request's method is recorded, in order. */
async function countedTable(): Promise<{ t: MembershipTable; requests: string[] }> {
  const requests: string[] = [];
  const counted = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("m"), {
    allowInsecureConnection: true,
    additionalPolicies: [
      {
        policy: { name: "count", sendRequest: (req, next) => (requests.push(req.method), next(req)) },
        position: "perCall",
      },
    ],
  });
  await counted.createTable();
  return { t: new MembershipTable(counted, now), requests };
}

describe("MembershipTable: a re-declaration after the cap check's listing", () => {
  it("replaces the listed row in one round trip (not an insert that meets 409, then a read)", async () => {
    const { t, requests } = await countedTable();
    await t.upsert(ref, declaration());
    const listed = await t.listForTarget(ref);
    requests.length = 0;
    const absent = declaration({ requestId: "r-2", state: "absent", declaredAt: "2026-12-02T09:30:00.000Z" });
    expect((await t.upsert(ref, absent, listed)).result).toBe("updated");
    expect(requests).toEqual(["PUT"]);
    expect((await t.listForTarget(ref)).map((d) => [d.requestId, d.state])).toEqual([["r-2", "absent"]]);
    // A redelivery and an older declaration are answered from the listing, with no round trip at all.
    const now2 = await t.listForTarget(ref);
    requests.length = 0;
    expect((await t.upsert(ref, absent, now2)).result).toBe("unchanged");
    expect((await t.upsert(ref, declaration({ requestId: "r-0" }), now2)).result).toBe("older");
    expect(requests).toEqual([]);
  });

  it("a listing gone stale never overwrites the newer row written since: the replace meets 412 and reads again", async () => {
    const { t } = await countedTable();
    await t.upsert(ref, declaration());
    const stale = await t.listForTarget(ref);
    await t.upsert(ref, declaration({ requestId: "r-3", state: "absent", declaredAt: "2026-12-02T09:50:00.000Z" }));
    const between = declaration({ requestId: "r-2", declaredAt: "2026-12-02T09:30:00.000Z" });
    expect((await t.upsert(ref, between, stale)).result).toBe("older");
    expect((await t.listForTarget(ref)).map((d) => d.requestId)).toEqual(["r-3"]);
    const later = declaration({ requestId: "r-4", declaredAt: "2026-12-02T09:55:00.000Z" });
    expect((await t.upsert(ref, later, stale)).result).toBe("updated");
    expect((await t.listForTarget(ref)).map((d) => d.requestId)).toEqual(["r-4"]);
  });
});

describe("MembershipTable: the outcomes of one pass", () => {
  it("outcomes recorded together go in one Table round trip; a row replaced meanwhile still loses alone", async () => {
    const { t, requests } = await countedTable();
    const pools = Array.from({ length: 5 }, (_, i) => `${POOL}-${i}`);
    for (const p of pools) await t.upsert(ref, declaration({ backendPoolId: p }));
    const stored = await t.listForTarget(ref);
    const applied = { kind: "applied" as const, appliedEtag: '"9"', at: "2026-12-02T10:01:00.000Z" };

    requests.length = 0;
    expect(await Promise.all(stored.map((d) => t.recordOutcome(ref, d, applied)))).toEqual(Array(5).fill(true));
    expect(requests).toEqual(["POST"]);
    expect((await t.listForTarget(ref)).map((d) => d.outcome.kind)).toEqual(Array(5).fill("applied"));

    // The same rows on their old ETags, one of them replaced by a newer declaration first: that one alone says false.
    await t.upsert(
      ref,
      declaration({ backendPoolId: pools[2], requestId: "r-9", declaredAt: "2026-12-02T09:50:00.000Z" }),
    );
    const failed = { kind: "failed" as const, reason: "x", retryAt: "2026-12-02T10:05:00.000Z", at: applied.at };
    const fresh = await t.listForTarget(ref);
    const answers = await Promise.all(
      stored.map((d) =>
        t.recordOutcome(
          ref,
          fresh.find((f) => f.backendPoolId === d.backendPoolId && d.backendPoolId !== pools[2]) ?? d,
          failed,
        ),
      ),
    );
    expect(answers).toEqual([true, true, false, true, true]);
    const after = await t.listForTarget(ref);
    expect(after.find((d) => d.backendPoolId === pools[2])?.requestId).toBe("r-9");
    expect(after.find((d) => d.backendPoolId === pools[2])?.outcome.kind).toBe("pending");
    expect(after.filter((d) => d.outcome.kind === "failed")).toHaveLength(4);
  });
});
