import type { TableClient } from "@azure/data-tables";
import type { CachedResourceRef } from "../core/ports";
import { parseTargetId, type TargetRef } from "../core/resourceIds";
import { encodeKey } from "../core/tableKeys";
import { statusOf } from "./tableErrors";

/**
 * Which target caches a NIC or a VM: one row per resource in the shared table's "~owners" partition, written once when
 * a target first caches it, read when an event names only the NIC or the VM. Storage content is input: a row whose
 * target does not parse is no owner.
 */
const OWNERS_PARTITION = "~owners";

export class ResourceOwnerTable {
  /** What this process last read or wrote: ownership rarely changes, and an event burst names the same NICs. */
  private readonly known = new Map<string, TargetRef>();

  constructor(readonly table: TableClient) {}

  async remember(resource: CachedResourceRef, target: TargetRef): Promise<void> {
    if (this.known.get(resource.key)?.key === target.key) return;
    await this.table.upsertEntity(
      { partitionKey: OWNERS_PARTITION, rowKey: encodeKey(resource.key), targetId: target.id },
      "Replace",
    );
    this.remembered(resource.key, target);
  }

  async ownerOf(resource: CachedResourceRef): Promise<TargetRef | undefined> {
    const known = this.known.get(resource.key);
    if (known) return known;
    try {
      const row = await this.table.getEntity<{ targetId?: unknown }>(OWNERS_PARTITION, encodeKey(resource.key));
      const target = parseTargetId(row.targetId);
      if (!target.ok) return undefined;
      this.remembered(resource.key, target.value);
      return target.value;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  private remembered(key: string, target: TargetRef): void {
    if (this.known.size > 10_000) this.known.clear();
    this.known.set(key, target);
  }
}
