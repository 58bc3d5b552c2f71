import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { weakKeyReason } from "../../src/core/keyStrength";

describe("key strength", () => {
  it("leaves random keys alone: hex, base64, and two GUIDs", () => {
    for (let i = 0; i < 50; i++) {
      expect(weakKeyReason(randomBytes(16).toString("hex"), 32)).toBeUndefined();
      expect(weakKeyReason(randomBytes(24).toString("base64"), 32)).toBeUndefined();
    }
    expect(
      weakKeyReason("3f2b8c1e-9a7d-4e5f-b6c2-1d0e8f7a6b5c5e1d2c3b-4a59-4687-9a8b-7c6d5e4f3a2b", 32),
    ).toBeUndefined();
  });

  it("refuses a key shorter than asked, saying how long it is", () => {
    expect(weakKeyReason("abc", 32)).toBe("is 3 characters long; it must be at least 32 random characters");
  });

  it("refuses a placeholder, whatever its case and separators", () => {
    expect(weakKeyReason("Xq9-CHANGE_ME-7Lp2vR8sT4wZ1yK6nB3m", 32)).toBe(
      'looks like a placeholder (it contains "changeme"), not a random key',
    );
  });

  it("refuses a short pattern repeated, a run, and too few bits", () => {
    expect(weakKeyReason("k3Q9".repeat(10), 32)).toBe("repeats a 4-character pattern");
    expect(weakKeyReason("Zr8#kP2m!Lq5@wX7$bN3".repeat(2), 32)).toBe("repeats a 20-character pattern");
    expect(weakKeyReason(`abcdefghijklmnopqrstuvwxyz${"Q7x!"}`.padEnd(40, "0"), 32)).toMatch(
      /^is mostly one run of 26/,
    );
    expect(weakKeyReason("0000000000000000000000000000000000000001", 32)).toMatch(/^is mostly one run/);
    expect(weakKeyReason("aabbaabbabababbbaaabbababbbabaabbaababab", 32)).toMatch(/^has about \d+ bits of entropy/);
  });
});
