import { parseTimeSpan } from "./hostConfig";

/**
 * Timer schedules as the Functions timer extension reads them: an NCRONTAB expression (six fields, seconds first;
 * five fields are accepted too and mean second 0, as the extension's `HasSeconds` check does), or a TimeSpan
 * (`hh:mm:ss`, a constant interval). Pure functions over local time, like the host, which schedules in the
 * machine's time zone (`WEBSITE_TIME_ZONE`/`TZ`).
 */
export interface CronSchedule {
  kind: "cron";
  expression: string;
  seconds: ReadonlySet<number>;
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  daysOfWeek: ReadonlySet<number>;
}

export interface ConstantSchedule {
  kind: "constant";
  expression: string;
  periodMs: number;
}

export type TimerSchedule = CronSchedule | ConstantSchedule;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

interface FieldSpec {
  label: string;
  min: number;
  max: number;
  names?: string[];
  /** What the first name maps to (months start at 1, days of week at 0). */
  namesBase?: number;
}

const FIELDS: FieldSpec[] = [
  { label: "second", min: 0, max: 59 },
  { label: "minute", min: 0, max: 59 },
  { label: "hour", min: 0, max: 23 },
  { label: "day", min: 1, max: 31 },
  { label: "month", min: 1, max: 12, names: MONTHS, namesBase: 1 },
  { label: "day of week", min: 0, max: 6, names: DAYS, namesBase: 0 },
];

function parseValue(text: string, spec: FieldSpec, expr: string): number {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n < spec.min || n > spec.max) throw new Error(`"${expr}": ${spec.label} ${n} is outside ${spec.min}-${spec.max}`);
    return n;
  }
  const lower = text.toLowerCase();
  // Names by their first three letters ("Mon", "monday", "JAN"), case-insensitive.
  const i = lower.length >= 3 ? (spec.names?.indexOf(lower.slice(0, 3)) ?? -1) : -1;
  if (i < 0 || spec.namesBase === undefined) throw new Error(`"${expr}": "${text}" is not a valid ${spec.label}`);
  return i + spec.namesBase;
}

/** One field: comma-separated `*`, `n`, `a-b`, each optionally `/step`; `a/step` runs from a to the field's max (NCrontab). */
export function parseField(text: string, spec: FieldSpec, expr: string): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(",")) {
    if (part === "") throw new Error(`"${expr}": empty item in the ${spec.label} field`);
    const [range = "", stepText, extra] = part.split("/");
    if (extra !== undefined) throw new Error(`"${expr}": "${part}" has more than one "/"`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) throw new Error(`"${expr}": step "${stepText}" must be a positive whole number`);
      step = Number(stepText);
    }
    let first: number;
    let last: number;
    if (range === "*") {
      first = spec.min;
      last = spec.max;
    } else if (range.includes("-")) {
      const [a = "", b = ""] = range.split("-");
      first = parseValue(a, spec, expr);
      last = parseValue(b, spec, expr);
      if (last < first) throw new Error(`"${expr}": ${spec.label} range ${range} runs backwards`);
    } else {
      first = parseValue(range, spec, expr);
      last = stepText === undefined ? first : spec.max;
    }
    for (let v = first; v <= last; v += step) out.add(v);
  }
  return out;
}

export function parseCron(expression: string): CronSchedule {
  const fields = expression.trim().split(/\s+/);
  if (fields.length === 5) fields.unshift("0");
  if (fields.length !== 6) {
    throw new Error(`"${expression}" is not an NCRONTAB expression: expected six fields (second minute hour day month day-of-week)`);
  }
  const sets = fields.map((f, i) => parseField(f, FIELDS[i] as FieldSpec, expression));
  const [seconds, minutes, hours, days, months, daysOfWeek] = sets as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  return { kind: "cron", expression, seconds, minutes, hours, days, months, daysOfWeek };
}

/** A cron expression, else a TimeSpan (constant interval), as the extension's TimerTriggerAttribute tries them. */
export function parseSchedule(expression: string): TimerSchedule {
  try {
    return parseCron(expression);
  } catch (cronError) {
    if (/^\s*(\d+\.)?\d{1,2}:\d{1,2}:\d{1,2}/.test(expression)) {
      const periodMs = parseTimeSpan(expression, "timer schedule");
      if (periodMs <= 0) throw new Error(`timer schedule "${expression}": the interval must be positive`);
      return { kind: "constant", expression, periodMs };
    }
    throw cronError;
  }
}

/** How far ahead to look before deciding a schedule never fires (Feb 29 on a given weekday repeats within 28 years). */
const SEARCH_YEARS = 30;

/**
 * The first occurrence strictly after `after`, at whole seconds, in local time. Day-of-month and day-of-week must
 * both match: NCrontab ANDs them (Vixie cron ORs them when both are restricted). Undefined when it never fires.
 */
export function nextOccurrence(schedule: TimerSchedule, after: Date): Date | undefined {
  if (schedule.kind === "constant") return new Date(after.getTime() + schedule.periodMs);
  const s = schedule;
  let t = new Date(Math.floor(after.getTime() / 1000) * 1000 + 1000);
  const limit = after.getFullYear() + SEARCH_YEARS;
  while (t.getFullYear() <= limit) {
    const [y, mo, d, h, mi, se] = [t.getFullYear(), t.getMonth(), t.getDate(), t.getHours(), t.getMinutes(), t.getSeconds()];
    if (!s.months.has(mo + 1)) t = new Date(y, mo + 1, 1, 0, 0, 0);
    else if (!s.days.has(d) || !s.daysOfWeek.has(t.getDay())) t = new Date(y, mo, d + 1, 0, 0, 0);
    else if (!s.hours.has(h)) t = new Date(y, mo, d, h + 1, 0, 0);
    else if (!s.minutes.has(mi)) t = new Date(y, mo, d, h, mi + 1, 0);
    else if (!s.seconds.has(se)) t = new Date(y, mo, d, h, mi, se + 1);
    else return t;
  }
  return undefined;
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
