import { describe, expect, it } from "vitest";
import { defaultUseMonitor, nextOccurrence, nextOccurrences, parseCron, parseSchedule } from "../../local/ncrontab";

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
    expect([...parseCron("0 5/20 * * * *").minutes]).toEqual([5, 25, 45]);
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
    expect(() => parseSchedule("0 61 * * * *")).toThrow(/minute 61 is outside 0-59/);
    expect(() => parseSchedule("0 0 0 * * Funday")).toThrow(/"Funday" is not a valid day of week/);
    expect(() => parseSchedule("0 */0 * * * *")).toThrow(/step "0"/);
    expect(() => parseSchedule("0 10-5 * * * *")).toThrow(/runs backwards/);
  });

  it("monitors schedules that fire at most once a minute, not faster ones", () => {
    const now = at(2024, 1, 1);
    expect(defaultUseMonitor(parseSchedule("0 */5 * * * *"), now)).toBe(true);
    expect(defaultUseMonitor(parseSchedule("*/30 * * * * *"), now)).toBe(false);
    expect(defaultUseMonitor(parseSchedule("00:00:30"), now)).toBe(false);
  });
});
