import type { TableClient } from "@azure/data-tables";
import type { TimerState, TimerStateStore } from "../core/ports";
import { statusOf } from "./tableErrors";

/** Encoded IDs start with "%2F", so this partition can never be a scale set's. */
const TIMER_PARTITION = "~timer";
const TIMER_ROW = "state";

/**
 * The longest the timer is put off by a stored 429's Retry-After: ARM's longest that poolsync honours (armErrors.ts).
 * A later notBefore is not one poolsync stored (a planted value, a clock that jumped) and puts nothing off.
 */
const MAX_NOT_BEFORE_MS = 6 * 3_600_000;

/** What the timer remembers between runs: one row in the shared table's "~timer" partition. Storage content is input. */
export class TimerStateTable implements TimerStateStore {
  constructor(
    readonly table: TableClient,
    private readonly now: () => number = Date.now,
  ) {}

  async read(): Promise<TimerState> {
    try {
      const row = await this.table.getEntity<Record<string, unknown>>(TIMER_PARTITION, TIMER_ROW);
      const notBefore = Number(row["notBefore"]);
      const resume = parseJson(row["resume"]) as { group?: unknown; nextLink?: unknown } | undefined;
      const lastRun = parseJson(row["lastRun"]) as TimerState["lastRun"] | undefined;
      return {
        notBefore:
          Number.isFinite(notBefore) && notBefore > 0 && notBefore <= this.now() + MAX_NOT_BEFORE_MS ? notBefore : 0,
        cursor: typeof row["cursor"] === "string" ? row["cursor"].slice(0, 1_024) : "",
        ...(typeof resume?.group === "string" && typeof resume.nextLink === "string"
          ? { resume: { group: resume.group, nextLink: resume.nextLink } }
          : {}),
        ...(lastRun && typeof lastRun === "object" && Number.isFinite(Number(lastRun.at)) ? { lastRun } : {}),
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

/** A row another version wrote badly, or a planted one, must not stop the timer: it then starts from scratch. */
function parseJson(text: unknown): unknown {
  if (typeof text !== "string") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
