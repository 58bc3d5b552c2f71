import type { TableClient } from "@azure/data-tables";
import type { UnheldEvent, UnheldEvents } from "../core/ports";
import { statusOf } from "./tableErrors";

/**
 * Events about resources poolsync holds nothing for (no declaration, no cache row): counted in one row, the cache
 * table's "~events" partition, with the last few kept. Such an event creates no row of its own: anyone who can reach
 * the webhook can send one for a made-up resource ID, and a row per ID would grow without bound. The row is how an
 * operator (and `npm run smoke`) sees that Event Grid delivers, whatever the event was about.
 */

export const EVENTS_PARTITION = "~events";
const ROW_KEY = "unheld";
/** The last events kept; the row stays a few kilobytes whatever the senders do. */
export const UNHELD_KEPT = 20;
const MAX_TRIES = 4;

interface TallyRow {
  count?: number;
  recent?: string;
}

export class UnheldEventTable implements UnheldEvents {
  constructor(readonly table: TableClient) {}

  async record(e: UnheldEvent): Promise<void> {
    const item: UnheldEvent = {
      at: e.at,
      resourceId: e.resourceId.slice(0, 512),
      reason: e.reason.slice(0, 512),
    };
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const row = await this.read();
      const next = {
        partitionKey: EVENTS_PARTITION,
        rowKey: ROW_KEY,
        count: (row?.count ?? 0) + 1,
        recent: JSON.stringify([item, ...(row?.recent ?? [])].slice(0, UNHELD_KEPT)),
      };
      try {
        if (!row) await this.table.createEntity(next);
        else await this.table.updateEntity(next, "Replace", { etag: row.etag });
        return;
      } catch (err) {
        // Another delivery counted meanwhile: count again on top of it. After a few, this one goes uncounted: a
        // tally is a signal, not a ledger, and the event's own log line stays.
        if (statusOf(err) !== 409 && statusOf(err) !== 412) throw err;
      }
    }
  }

  async summary(): Promise<{ count: number; recent: UnheldEvent[] }> {
    const row = await this.read();
    return { count: row?.count ?? 0, recent: row?.recent ?? [] };
  }

  private async read(): Promise<{ count: number; recent: UnheldEvent[]; etag: string } | undefined> {
    let row: TallyRow & { etag: string };
    try {
      row = await this.table.getEntity<TallyRow>(EVENTS_PARTITION, ROW_KEY);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
    return { count: Number(row.count ?? 0), recent: parseRecent(row.recent), etag: row.etag };
  }
}

/** Storage content is input: anything but a list of well-formed items reads as none. */
function parseRecent(text: string | undefined): UnheldEvent[] {
  try {
    const list: unknown = JSON.parse(text ?? "[]");
    if (!Array.isArray(list)) return [];
    return list
      .filter(
        (i): i is UnheldEvent =>
          typeof i === "object" &&
          i !== null &&
          typeof (i as UnheldEvent).at === "string" &&
          typeof (i as UnheldEvent).resourceId === "string" &&
          typeof (i as UnheldEvent).reason === "string",
      )
      .slice(0, UNHELD_KEPT);
  } catch {
    return [];
  }
}
