import { existsSync, readFileSync, writeFileSync } from "node:fs";

/**
 * Writes a section that a run of its own measured (between its start and end marks) into RESULTS.md in place, or at
 * its end when it has none yet, leaving every other section as it was.
 */
export function writeMarkedSection(resultsMd: string, marks: { start: string; end: string }, section: string): void {
  const text = existsSync(resultsMd) ? readFileSync(resultsMd, "utf8") : "";
  const start = text.indexOf(marks.start);
  const end = text.indexOf(marks.end);
  const next =
    start >= 0 && end > start
      ? text.slice(0, start) + section.trimEnd() + text.slice(end + marks.end.length)
      : `${text.trimEnd()}\n\n${section}`;
  writeFileSync(resultsMd, next);
}
