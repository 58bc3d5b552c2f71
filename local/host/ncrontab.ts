import { Cron } from "croner";
import { parseTimeSpan } from "./hostConfig";

/**
 * Timer schedules as the Functions timer extension reads them: an NCRONTAB expression (six fields, seconds first;
 * five fields are accepted too and mean second 0, as the extension's `HasSeconds` check does), evaluated by
 * croner, or a TimeSpan (`hh:mm:ss`, a constant interval). Local time, like the host, which schedules in the
 * machine's time zone (`WEBSITE_TIME_ZONE`/`TZ`).
 */
export interface CronSchedule {
  kind: "cron";
  expression: string;
  cron: Cron;
}

export interface ConstantSchedule {
  kind: "constant";
  expression: string;
  periodMs: number;
}

export type TimerSchedule = CronSchedule | ConstantSchedule;

const FIELDS = ["second", "minute", "hour", "day", "month", "day of week"] as const;
const NAMES: Partial<Record<(typeof FIELDS)[number], string[]>> = {
  month: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  "day of week": ["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
};

/**
 * The expression as NCrontab reads it, for croner: six fields (five mean second 0); only `*`, numbers, names,
 * `,`, `-` and `/` (croner's `L`, `W`, `#` and `?` are not NCRONTAB); names by their first three letters, as
 * NCrontab matches them ("monday" is "mon"); days of week 0-6 (croner also takes 7 for Sunday).
 */
function ncrontabPattern(expression: string): string {
  const fields = expression.trim().split(/\s+/);
  if (fields.length === 5) fields.unshift("0");
  if (fields.length !== 6) {
    throw new Error(
      `"${expression}" is not an NCRONTAB expression: expected six fields (second minute hour day month day-of-week)`,
    );
  }
  return fields
    .map((field, i) => {
      const label = FIELDS[i] as (typeof FIELDS)[number];
      return field.replace(/[^,\-/]+/g, (token) => {
        if (token === "*" || /^\d+$/.test(token)) {
          if (label === "day of week" && Number(token) > 6)
            throw new Error(`"${expression}": day of week ${token} is outside 0-6`);
          return token;
        }
        const name = token.slice(0, 3).toLowerCase();
        if (/^[a-z]{3,}$/i.test(token) && NAMES[label]?.includes(name)) return name;
        throw new Error(`"${expression}": "${token}" is not a valid ${label}`);
      });
    })
    .join(" ");
}

export function parseCron(expression: string): CronSchedule {
  const pattern = ncrontabPattern(expression);
  try {
    // Days of month AND days of week, as NCrontab combines them (Vixie cron ORs them); `a/n` runs from a to the
    // field's maximum, as NCrontab reads it (croner's sloppy ranges). Local time, like the host.
    return {
      kind: "cron",
      expression,
      cron: new Cron(pattern, { mode: "6-part", domAndDow: true, sloppyRanges: true }),
    };
  } catch (err) {
    throw new Error(`"${expression}": ${(err as Error).message.replace(/^CronPattern: /, "")}`, { cause: err });
  }
}

/** A cron expression, else a TimeSpan (constant interval), as the extension's TimerTriggerAttribute tries them. */
export function parseSchedule(expression: string): TimerSchedule {
  let cronError: unknown;
  try {
    return parseCron(expression);
  } catch (err) {
    cronError = err;
  }
  if (/^\s*(\d+\.)?\d{1,2}:\d{1,2}:\d{1,2}/.test(expression)) {
    const periodMs = parseTimeSpan(expression, "timer schedule");
    if (periodMs <= 0) throw new Error(`timer schedule "${expression}": the interval must be positive`);
    return { kind: "constant", expression, periodMs };
  }
  throw cronError;
}

/** The first occurrence strictly after `after`, at whole seconds, in local time; undefined when it never fires. */
export function nextOccurrence(schedule: TimerSchedule, after: Date): Date | undefined {
  if (schedule.kind === "constant") return new Date(after.getTime() + schedule.periodMs);
  return schedule.cron.nextRun(after) ?? undefined;
}

export function nextOccurrences(schedule: TimerSchedule, after: Date, count: number): Date[] {
  const out: Date[] = [];
  let t: Date | undefined = after;
  while (out.length < count && (t = nextOccurrence(schedule, t))) out.push(t);
  return out;
}

/**
 * The extension's default for `useMonitor`: on, unless the schedule fires more than once a minute (then persisting
 * every occurrence would cost more than a missed one). A constant schedule is monitored when its period is >= 1 min.
 */
export function defaultUseMonitor(schedule: TimerSchedule, now: Date): boolean {
  if (schedule.kind === "constant") return schedule.periodMs >= 60_000;
  const first = nextOccurrence(schedule, now);
  const second = first && nextOccurrence(schedule, first);
  return !(second && second.getTime() <= now.getTime() + 60_000);
}
