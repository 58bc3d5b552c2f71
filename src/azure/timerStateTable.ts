import type { TableClient } from "@azure/data-tables";
import type { TimerState, TimerStateStore } from "../core/ports";
import { statusOf } from "./tableErrors";

/** Encoded IDs start with "%2F", so this partition can never be a scale set's. */
const TIMER_PARTITION = "~timer";
const TIMER_ROW = "state";

/** What the timer remembers between runs: one row in the cache table's "~timer" partition. */
export class TimerStateTable implements TimerStateStore {
  constructor(readonly table: TableClient) {}

  async read(): Promise<TimerState> {
    try {
      const row = await this.table.getEntity<{
        notBefore?: number;
        cursor?: string;
        resume?: string;
        lastRun?: string;
      }>(TIMER_PARTITION, TIMER_ROW);
      return {
        notBefore: Number(row.notBefore ?? 0),
        cursor: row.cursor ?? "",
        ...(row.resume ? { resume: parseJson(row.resume) as TimerState["resume"] } : {}),
        ...(row.lastRun ? { lastRun: parseJson(row.lastRun) as TimerState["lastRun"] } : {}),
      };
    } catch (err) {
      if (statusOf(err) === 404) return { notBefore: 0, cursor: "" };
      throw err;
    }
  }

  async write(state: TimerState): Promise<void> {
    await this.table.upsertEntity(
      {
        partitionKey: TIMER_PARTITION,
        rowKey: TIMER_ROW,
        notBefore: state.notBefore,
        cursor: state.cursor,
        ...(state.resume ? { resume: JSON.stringify(state.resume) } : {}),
        ...(state.lastRun ? { lastRun: JSON.stringify(state.lastRun) } : {}),
      },
      "Replace",
    );
  }
}

/** A row another version wrote badly must not stop the timer: it then starts its LISTs from the first page. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
