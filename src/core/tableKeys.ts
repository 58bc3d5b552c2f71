/**
 * Reversible encoding of arbitrary strings (canonical ARM IDs) into Table Storage keys, which forbid
 * `/ \ # ?` and control characters. Percent-encoding keeps keys readable in Storage Explorer and sortable by ID.
 */

export const MAX_KEY_BYTES = 1024;

// `%` itself is escaped first so that decoding is unambiguous.
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[%/\\#?\u0000-\u001f\u007f-\u009f]/g;

export class KeyTooLongError extends Error {
  override name = "KeyTooLongError";
}

export function encodeKey(value: string): string {
  const encoded = value.replace(NEEDS_ESCAPE, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0"));
  const bytes = Buffer.byteLength(encoded, "utf8");
  if (bytes > MAX_KEY_BYTES) {
    throw new KeyTooLongError(`table key would be ${bytes} bytes, over the ${MAX_KEY_BYTES}-byte limit`);
  }
  return encoded;
}

export function decodeKey(key: string): string {
  return key.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
