import type { TableClient } from "@azure/data-tables";
import type { TimerState, TimerStateStore } from "../core/ports";
import { statusOf } from "./tableErrors";

/** Encoded IDs start with "%2F", so this partition can never be a scale set's. */
const TIMER_PARTITION = "~timer";
const TIMER_ROW = "state";

/**
 * The longest a subscription's reads are put off by a stored pause: ARM's longest Retry-After that poolsync honours
 * (armErrors.ts). A later time is not one poolsync stored (a planted value, a clock that jumped) and puts nothing off.
 */
const MAX_PAUSE_MS = 6 * 3_600_000;

/** Pauses kept in the row at most (the soonest over first): a Table property holds 32K characters. */
const MAX_PAUSED = 256;

/** What the timer remembers between runs: one row in the shared table's "~timer" partition. Storage content is input. */
export class TimerStateTable implements TimerStateStore {
  constructor(
    readonly table: TableClient,
    private readonly now: () => number = Date.now,
  ) {}

  async read(): Promise<TimerState> {
    try {
      const row = await this.table.getEntity<Record<string, unknown>>(TIMER_PARTITION, TIMER_ROW);
      const resume = parseJson(row["resume"]) as { group?: unknown; nextLink?: unknown } | undefined;
      const lastRun = parseJson(row["lastRun"]) as TimerState["lastRun"] | undefined;
      return {
        paused: this.pausesOf(parseJson(row["paused"])),
        cursor: typeof row["cursor"] === "string" ? row["cursor"].slice(0, 1_024) : "",
        ...(typeof resume?.group === "string" && typeof resume.nextLink === "string"
          ? { resume: { group: resume.group, nextLink: resume.nextLink } }
          : {}),
        ...(lastRun && typeof lastRun === "object" && Number.isFinite(Number(lastRun.at)) ? { lastRun } : {}),
      };
    } catch (err) {
      if (statusOf(err) === 404) return { paused: {}, cursor: "" };
      throw err;
    }
  }

  async write(state: TimerState): Promise<void> {
    await this.table.upsertEntity(
      {
        partitionKey: TIMER_PARTITION,
        rowKey: TIMER_ROW,
        paused: JSON.stringify(Object.fromEntries(latestPauses(Object.entries(state.paused)))),
        cursor: state.cursor,
        ...(state.resume ? { resume: JSON.stringify(state.resume) } : {}),
        ...(state.lastRun ? { lastRun: JSON.stringify(state.lastRun) } : {}),
      },
      "Replace",
    );
  }

  /** Subscription → until, each a time ahead and within MAX_PAUSE_MS; anything else in the row pauses nothing. */
  private pausesOf(value: unknown): Record<string, number> {
    if (!value || typeof value !== "object" || Array.isArray(value)) return {};
    const now = this.now();
    const valid = Object.entries(value).filter(
      (e): e is [string, number] =>
        /^[0-9a-z-]{1,64}$/.test(e[0]) && typeof e[1] === "number" && e[1] > now && e[1] <= now + MAX_PAUSE_MS,
    );
    return Object.fromEntries(latestPauses(valid));
  }
}

/** The MAX_PAUSED pauses that last longest. */
function latestPauses(entries: Array<[string, number]>): Array<[string, number]> {
  return entries.length <= MAX_PAUSED ? entries : [...entries].sort((a, b) => b[1] - a[1]).slice(0, MAX_PAUSED);
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
