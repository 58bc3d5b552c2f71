/**
 * What the CLI prints comes largely from elsewhere: declarations' reasons hold ARM's messages, the poison queue holds
 * whatever anyone wrote to the queue, a caller's name is whatever their directory says. A terminal obeys escape
 * sequences in text it prints: clearing the screen, retitling the window, a hyperlink to anywhere, a line that
 * overprints the one before, right-to-left overrides that show a different ID than the one copied. So every string
 * that did not come from the CLI itself is made inert before it is printed: escape sequences (CSI, OSC, and their
 * 8-bit forms) are removed whole, other control characters and bidirectional overrides dropped, and line breaks
 * become spaces, so one stored string can never forge a line of its own. `--json` keeps the data exact instead:
 * JSON escapes C0 controls itself; the C1 controls, line separators and bidi overrides it leaves raw are escaped too.
 */

/* eslint-disable no-control-regex -- these patterns exist to find control characters */
/** ESC [ … final, ESC ] … BEL or ST, ESC P/X/^/_ … ST, other two-character ESC sequences; and the 8-bit CSI/OSC/DCS. */
const ESCAPE_SEQUENCE =
  /\u001b\[[0-?]*[ -/]*[@-~]?|\u001b[\]PX^_][\s\S]*?(?:\u0007|\u001b\\|$)|\u001b[ -~]?|\u009b[0-?]*[ -/]*[@-~]?|[\u009d\u0090\u0098\u009e\u009f][\s\S]*?(?:\u0007|\u009c|\u001b\\|$)/g;
const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
const INERT_ONLY = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/* eslint-enable no-control-regex */

/** One string from the server, safe to print: no escape sequence, no control character, on one line. */
export function terminalSafe(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, "").replace(LINE_BREAKS, " ").replace(INERT_ONLY, "");
}

/** Every string in a JSON answer (keys too, some are printed) made safe, for the text formatters. */
export function terminalSafeJson<T>(value: T): T {
  if (typeof value === "string") return terminalSafe(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => terminalSafeJson(v)) as T;
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [terminalSafe(k), terminalSafeJson(v as unknown)]),
    ) as T;
  return value;
}

/** `--json`: the answer exactly, with the characters JSON.stringify leaves raw but a terminal obeys escaped. */
export function jsonForTerminal(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
