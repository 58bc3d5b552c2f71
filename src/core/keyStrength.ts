/**
 * Whether a secret key (POOLSYNC_CACHE_KEY, the HMAC key of the cache rows) is too weak to use. A key can only be
 * judged by its text, never proven random, so this refuses what is plainly not: too short, a placeholder someone
 * meant to replace, one short pattern repeated, a run such as "abcdef…" or "0000…", or too few bits by its own
 * character counts. The thresholds leave real random keys alone: 32 hex digits (128 bits) estimate at 88 bits or
 * more, 32 base64 characters at 124 or more, in 200,000 samples each; a GUID pair (the template's default) at 253.
 */

/** Words of placeholders and sample values, matched in the key's letters and digits (case and separators ignored). */
const PLACEHOLDERS = [
  "changeme",
  "changethis",
  "placeholder",
  "replaceme",
  "replacethis",
  "example",
  "secret",
  "password",
  "passw0rd",
  "yourkey",
  "insertkey",
  "sample",
];

/** Estimated bits below this (Shannon entropy of the key's character counts, times its length) are too few. */
export const MIN_ESTIMATED_BITS = 64;

export function weakKeyReason(key: string, minChars: number): string | undefined {
  if (key.length < minChars)
    return `is ${key.length} characters long; it must be at least ${minChars} random characters`;
  const letters = key.toLowerCase().replace(/[^a-z0-9]/g, "");
  const word = PLACEHOLDERS.find((w) => letters.includes(w));
  if (word) return `looks like a placeholder (it contains "${word}"), not a random key`;
  const period = shortestPeriod(key);
  if (period <= key.length / 2) return `repeats a ${period}-character pattern`;
  const run = longestRun(key);
  if (run >= key.length / 2) return `is mostly one run of ${run} characters (like "aaaa" or "abcd")`;
  const bits = estimatedBits(key);
  if (bits < MIN_ESTIMATED_BITS)
    return `has about ${Math.floor(bits)} bits of entropy by its character counts, fewer than ${MIN_ESTIMATED_BITS}`;
  return undefined;
}

/** The shortest p such that the key is its first p characters repeated (the key's length when none is shorter). */
function shortestPeriod(s: string): number {
  for (let p = 1; p <= s.length / 2; p++) {
    let repeats = true;
    for (let i = p; i < s.length && repeats; i++) repeats = s[i] === s[i - p];
    if (repeats) return p;
  }
  return s.length;
}

/** The longest stretch of characters each one code point from the last in the same direction, or all equal. */
function longestRun(s: string): number {
  let best = Math.min(s.length, 1);
  let current = 1;
  for (let i = 1; i < s.length; i++) {
    const step = s.charCodeAt(i) - s.charCodeAt(i - 1);
    const previous = i >= 2 ? s.charCodeAt(i - 1) - s.charCodeAt(i - 2) : step;
    current = Math.abs(step) <= 1 && step === previous ? current + 1 : Math.abs(step) <= 1 ? 2 : 1;
    best = Math.max(best, current);
  }
  return best;
}

function estimatedBits(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let perChar = 0;
  for (const n of counts.values()) perChar -= (n / s.length) * Math.log2(n / s.length);
  return perChar * s.length;
}
