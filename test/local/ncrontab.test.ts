import { describe, expect, it } from "vitest";
import { defaultUseMonitor, nextOccurrence, nextOccurrences, parseSchedule } from "../../local/host/ncrontab";

// Local-time constructors throughout: the host schedules in the machine's time zone, and so does the runtime.
const at = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => new Date(y, mo - 1, d, h, mi, s);

describe("NCRONTAB next occurrence", () => {
  it("every five minutes, at second 0, strictly after the base time", () => {
    const s = parseSchedule("0 */5 * * * *");
    expect(nextOccurrence(s, at(2024, 3, 10, 12, 0, 0))).toEqual(at(2024, 3, 10, 12, 5, 0));
    expect(nextOccurrence(s, at(2024, 3, 10, 12, 4, 59))).toEqual(at(2024, 3, 10, 12, 5, 0));
    expect(nextOccurrences(s, at(2024, 3, 10, 23, 56), 2)).toEqual([at(2024, 3, 11, 0, 0), at(2024, 3, 11, 0, 5)]);
  });

  it("seconds field: every 10 seconds", () => {
    expect(nextOccurrence(parseSchedule("*/10 * * * * *"), at(2024, 1, 1, 0, 0, 5))).toEqual(at(2024, 1, 1, 0, 0, 10));
  });

  it("ranges, lists and names: weekdays at 09:30 and 17:30", () => {
    const s = parseSchedule("0 30 9,17 * * Mon-Fri");
    // 2024-03-08 is a Friday.
    expect(nextOccurrence(s, at(2024, 3, 8, 18, 0))).toEqual(at(2024, 3, 11, 9, 30));
    expect(nextOccurrence(s, at(2024, 3, 11, 9, 30))).toEqual(at(2024, 3, 11, 17, 30));
  });

  it("a/n runs from a to the field's maximum, as NCrontab reads it", () => {
    expect(nextOccurrences(parseSchedule("0 5/20 * * * *"), at(2024, 1, 1), 4)).toEqual([
      at(2024, 1, 1, 0, 5),
      at(2024, 1, 1, 0, 25),
      at(2024, 1, 1, 0, 45),
      at(2024, 1, 1, 1, 5),
    ]);
  });

  it("day-of-month and day-of-week are ANDed (NCrontab), not ORed (Vixie cron)", () => {
    // The 13th that is a Friday: 2024-09-13.
    expect(nextOccurrence(parseSchedule("0 0 0 13 * 5"), at(2024, 1, 1))).toEqual(at(2024, 9, 13));
  });

  it("month names and the turn of the year", () => {
    expect(nextOccurrence(parseSchedule("0 0 0 1 Jan *"), at(2024, 6, 1))).toEqual(at(2025, 1, 1));
  });

  it("February 29th", () => {
    expect(nextOccurrence(parseSchedule("0 0 12 29 2 *"), at(2024, 3, 1))).toEqual(at(2028, 2, 29, 12));
  });

  it("five fields mean second 0 (the extension's HasSeconds check)", () => {
    expect(nextOccurrence(parseSchedule("*/15 * * * *"), at(2024, 1, 1, 0, 1, 30))).toEqual(at(2024, 1, 1, 0, 15, 0));
  });

  it("a schedule that never fires gives undefined", () => {
    expect(nextOccurrence(parseSchedule("0 0 0 31 2 *"), at(2024, 1, 1))).toBeUndefined();
  });

  it("a TimeSpan schedule is a constant interval", () => {
    const s = parseSchedule("00:10:00");
    expect(s.kind).toBe("constant");
    expect(nextOccurrence(s, at(2024, 1, 1, 0, 0, 0))).toEqual(at(2024, 1, 1, 0, 10, 0));
  });

  it("refuses malformed expressions with a message naming the problem", () => {
    expect(() => parseSchedule("0 */5 * * *  * *")).toThrow(/expected six fields/);
    expect(() => parseSchedule("0 61 * * * *")).toThrow(/^"0 61 \* \* \* \*": Invalid value for minute: 61/);
    expect(() => parseSchedule("0 0 0 * * Funday")).toThrow(/"Funday" is not a valid day of week/);
    expect(() => parseSchedule("0 0 0 * Mo *")).toThrow(/"Mo" is not a valid month/);
    expect(() => parseSchedule("0 */0 * * * *")).toThrow(/illegal stepping: 0/);
    expect(() => parseSchedule("0 10-5 * * * *")).toThrow(/From value is larger than to value: '10-5'/);
  });

  it("refuses what croner reads but NCRONTAB does not (L, W, #, ?, Sunday as 7)", () => {
    expect(() => parseSchedule("0 0 0 L * *")).toThrow(/"L" is not a valid day/);
    expect(() => parseSchedule("0 0 0 15W * *")).toThrow(/"15W" is not a valid day/);
    expect(() => parseSchedule("0 0 0 * * 5#2")).toThrow(/"5#2" is not a valid day of week/);
    expect(() => parseSchedule("0 0 0 ? * *")).toThrow(/"\?" is not a valid day/);
    expect(() => parseSchedule("0 0 0 * * 7")).toThrow(/day of week 7 is outside 0-6/);
  });

  it("names by their first three letters, any case, as NCrontab matches them", () => {
    expect(nextOccurrence(parseSchedule("0 0 0 * JANUARY monday"), at(2024, 6, 1))).toEqual(at(2025, 1, 6));
  });

  it("monitors schedules that fire at most once a minute, not faster ones", () => {
    const now = at(2024, 1, 1);
    expect(defaultUseMonitor(parseSchedule("0 */5 * * * *"), now)).toBe(true);
    expect(defaultUseMonitor(parseSchedule("*/30 * * * * *"), now)).toBe(false);
    expect(defaultUseMonitor(parseSchedule("00:00:30"), now)).toBe(false);
  });
});

/**
 * The host's documented NCRONTAB examples (the timer trigger's reference), each with what it says it means,
 * written out as the occurrences after a fixed time: Friday 2024-03-08 10:07:30 local.
 */
describe("the host's documented NCRONTAB examples", () => {
  const from = at(2024, 3, 8, 10, 7, 30);
  const cases: Array<[string, string, Date[]]> = [
    [
      "0 */5 * * * *",
      "once every five minutes",
      [at(2024, 3, 8, 10, 10), at(2024, 3, 8, 10, 15), at(2024, 3, 8, 10, 20)],
    ],
    ["0 0 * * * *", "once at the top of every hour", [at(2024, 3, 8, 11), at(2024, 3, 8, 12), at(2024, 3, 8, 13)]],
    ["0 0 */2 * * *", "once every two hours", [at(2024, 3, 8, 12), at(2024, 3, 8, 14), at(2024, 3, 8, 16)]],
    [
      "0 0 9-17 * * *",
      "once every hour from 9 AM to 5 PM",
      [
        at(2024, 3, 8, 11),
        at(2024, 3, 8, 12),
        at(2024, 3, 8, 13),
        at(2024, 3, 8, 14),
        at(2024, 3, 8, 15),
        at(2024, 3, 8, 16),
        at(2024, 3, 8, 17),
        at(2024, 3, 9, 9),
      ],
    ],
    ["0 30 9 * * *", "at 9:30 AM every day", [at(2024, 3, 9, 9, 30), at(2024, 3, 10, 9, 30)]],
    [
      "0 30 9 * * 1-5",
      "at 9:30 AM every weekday",
      [
        at(2024, 3, 11, 9, 30),
        at(2024, 3, 12, 9, 30),
        at(2024, 3, 13, 9, 30),
        at(2024, 3, 14, 9, 30),
        at(2024, 3, 15, 9, 30),
        at(2024, 3, 18, 9, 30),
      ],
    ],
    [
      "0 30 9 * Jan Mon",
      "at 9:30 AM every Monday in January",
      [
        at(2025, 1, 6, 9, 30),
        at(2025, 1, 13, 9, 30),
        at(2025, 1, 20, 9, 30),
        at(2025, 1, 27, 9, 30),
        at(2026, 1, 5, 9, 30),
      ],
    ],
  ];
  for (const [expression, meaning, expected] of cases) {
    it(`"${expression}": ${meaning}`, () => {
      expect(nextOccurrences(parseSchedule(expression), from, expected.length)).toEqual(expected);
    });
  }

  const spans: Array<[string, string, number]> = [
    ["01:00:00", "every hour", 3_600_000],
    ["00:01:00", "every minute", 60_000],
    ["1.00:00:00", "every day", 86_400_000],
  ];
  for (const [expression, meaning, periodMs] of spans) {
    it(`TimeSpan "${expression}": ${meaning}`, () => {
      expect(nextOccurrences(parseSchedule(expression), from, 2)).toEqual([
        new Date(from.getTime() + periodMs),
        new Date(from.getTime() + 2 * periodMs),
      ]);
    });
  }
});
