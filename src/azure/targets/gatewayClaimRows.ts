import { z } from "zod";
import type { GatewayClaimStore, GatewayRecord } from "../../core/gatewayPoolAddresses";
import type { Logger } from "../../core/ports";
import type { TargetRef } from "../../core/resourceIds";
import { statusOf } from "../tableErrors";
import { gatewayClaimsRowKey, targetPartition } from "./rowKeys";
import type { TargetStore } from "./targetStore";

/**
 * The addresses a target added to an Application Gateway pool (issue 43), a row of its target's partition
 * ("g|<pool key>": JSON `{claims: [{name, ipAddress}], doubt?}` in `parts` columns `claims0`, `claims1`, …, each within a
 * Table property's 32K characters: a gateway pool holds up to 1,200 addresses). A gateway's addresses carry no name, so this
 * row is the one thing that tells poolsync's addresses from another writer's: it is written only by the target's pass
 * (under its lease), dropped claims before the gateway write that removes them, new ones after the write that added
 * them answered. A row that does not decode is logged and read as no claims: poolsync then removes nothing there.
 */

const claims = z.array(z.object({ name: z.string().min(1).max(80), ipAddress: z.string().min(1).max(64) })).max(10_000);
const recordSchema = z.object({
  claims,
  doubt: z
    .object({
      ifMatch: z.string().min(1).max(256),
      sent: z.array(z.string().max(300)).max(10_000),
      claims,
      released: claims.optional(),
    })
    .optional(),
});

const PART = 30_000;

export class GatewayClaimTable implements GatewayClaimStore {
  constructor(
    private readonly store: TargetStore,
    private readonly log: Logger,
  ) {}

  async read(target: TargetRef, poolKey: string): Promise<GatewayRecord> {
    let row: Record<string, unknown>;
    try {
      row = await this.store.table.getEntity<Record<string, unknown>>(
        targetPartition(target),
        gatewayClaimsRowKey(poolKey),
      );
    } catch (err) {
      if (statusOf(err) === 404) return { claims: [] };
      throw err;
    }
    const parts = typeof row["parts"] === "number" && row["parts"] >= 0 && row["parts"] <= 64 ? row["parts"] : -1;
    const chunks = Array.from({ length: Math.max(0, parts) }, (_, i) => row[`claims${i}`]);
    const text = parts >= 0 && chunks.every((c) => typeof c === "string") ? chunks.join("") : undefined;
    const parsed = recordSchema.safeParse(text !== undefined ? safeJson(text) : undefined);
    if (parsed.success) return parsed.data;
    this.log.warn("storage.row-unusable", {
      targetId: target.id,
      rowKey: gatewayClaimsRowKey(poolKey),
      reason: "not a record of {claims: [{name, ipAddress}], doubt?}",
    });
    return { claims: [] };
  }

  async write(target: TargetRef, poolKey: string, record: GatewayRecord): Promise<void> {
    const text = JSON.stringify(record);
    const chunks: string[] = [];
    for (let at = 0; at < text.length; at += PART) chunks.push(text.slice(at, at + PART));
    const columns = Object.fromEntries(chunks.map((c, i) => [`claims${i}`, c]));
    await this.store.commit(targetPartition(target), [
      {
        kind: "upsert",
        entity: { rowKey: gatewayClaimsRowKey(poolKey), parts: chunks.length, ...columns },
      },
    ]);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
