import { describe, expect, it } from "vitest";
import { jsonForTerminal, terminalSafe, terminalSafeJson } from "../../src/cli/terminalText";

/** The CLI's text cleaning, pure: the sequences terminals obey, whole, and the ones left unterminated. */
describe("terminalSafe", () => {
  it.each([
    ["CSI colour and erase", "\u001b[1;31mred\u001b[0m\u001b[2J", "red"],
    ["an unterminated CSI at the end", "ok\u001b[12", "ok"],
    ["OSC title ended by BEL", "\u001b]0;title\u0007after", "after"],
    ["OSC hyperlink ended by ST", "\u001b]8;;https://x\u001b\\link\u001b]8;;\u001b\\", "link"],
    ["an unterminated OSC swallows the rest, as the terminal would", "a\u001b]0;never ended", "a"],
    ["DCS", "\u001bPq#0;2;0;0;0\u001b\\x", "x"],
    ["8-bit CSI and OSC", "\u009b31mred\u009d0;t\u0007!", "red!"],
    ["a lone ESC and two-character sequences", "\u001bc\u001b7a\u001b", "a"],
    ["line breaks and tabs become one space", "one\r\n\ttwo\u2028three\u0085four", "one two three four"],
    ["backspace, NUL, DEL, bidi overrides and isolates go", "a\b\u0000\u007f\u202e\u2066b\u200f", "ab"],
    ["ordinary text, accents and emoji stay", "Zoë — pool ✓ 🚀", "Zoë — pool ✓ 🚀"],
  ])("%s", (_name, input, out) => {
    expect(terminalSafe(input)).toBe(out);
  });

  it("cleans every string of an answer, keys included, and leaves the rest", () => {
    expect(terminalSafeJson({ "\u001b[31mk": ["v\u001b[0m", 1, null, { x: "a\nb" }] })).toEqual({
      k: ["v", 1, null, { x: "a b" }],
    });
  });

  it("--json stays exact and parses back, with nothing a terminal obeys left raw", () => {
    const value = { s: "\u001b[2J\u009b\u202e\u2028x" };
    const text = jsonForTerminal(value);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u202e]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
