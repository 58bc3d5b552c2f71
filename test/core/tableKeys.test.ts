import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeKey, encodeKey, KeyTooLongError } from "../../src/core/tableKeys";

describe("table key encoding", () => {
  it("escapes what Table Storage forbids and keeps IDs readable", () => {
    expect(encodeKey("/subscriptions/x/a#b?c\\d%e")).toBe("%2Fsubscriptions%2Fx%2Fa%23b%3Fc%5Cd%25e");
  });

  it("property: reversible, and never emits a forbidden character", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (s) => {
        const key = encodeKey(s);
        expect(decodeKey(key)).toBe(s);
        // eslint-disable-next-line no-control-regex
        expect(key).not.toMatch(/[/\\#?\u0000-\u001f\u007f-\u009f]/);
      }),
    );
  });

  it("property: distinct inputs give distinct keys", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        fc.pre(a !== b);
        expect(encodeKey(a)).not.toBe(encodeKey(b));
      }),
    );
  });

  it("refuses a key over 1 KiB instead of letting Storage truncate or reject it later", () => {
    expect(() => encodeKey("/".repeat(400))).toThrow(KeyTooLongError);
    expect(() => encodeKey("/".repeat(400))).toThrow("table key would be 1200 bytes, over the 1024-byte limit");
  });
});
