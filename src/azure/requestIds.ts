import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * poolsync's own `x-ms-client-request-id`s, recognisable in the ARM events they cause without reading anything: a
 * GUID whose last 16 hex digits are an HMAC, with the app's key, of its first part and the resource written. An event
 * carrying one is our own write (the cache already holds its answer, or a pass re-reads), so it costs no Table round
 * trip; anyone else's invalidates. Bound to the resource, a copied ID passes for ours on no other resource; without the
 * key nobody can make one.
 */

const HEX = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** ARM IDs in events may differ in letter case and carry a trailing slash. */
const canonical = (resourceId: string) => resourceId.toLowerCase().replace(/\/+$/, "");

export class RequestIds {
  private readonly key: Buffer;

  /** `key` empty: a random key of this process (then only this process recognises its own writes). */
  constructor(key: string) {
    this.key = key === "" ? randomBytes(32) : Buffer.from(`poolsync request ids\0${key}`, "utf8");
  }

  private mac(head: string, resourceId: string): string {
    return createHmac("sha256", this.key)
      .update(`${head.toLowerCase()}\0${canonical(resourceId)}`)
      .digest("hex")
      .slice(0, 16);
  }

  /** A new ID for a write to `resourceId`: version 4 GUID shape, 16 digits random, 16 the MAC. */
  next(resourceId: string): string {
    const r = randomBytes(8).toString("hex");
    // 8-4-4: "xxxxxxxx-xxxx-4xxx" holds 15 random digits; the variant digit and the MAC make the rest.
    const head = `${r.slice(0, 8)}-${r.slice(8, 12)}-4${r.slice(12, 15)}`;
    const tag = this.mac(head, resourceId);
    return `${head}-${"89ab"[parseInt(tag.slice(0, 1), 16) % 4]}${tag.slice(1, 4)}-${tag.slice(4, 16)}`;
  }

  /** Whether `id` is one this app made for a write to `resourceId`. */
  ours(id: string | undefined, resourceId: string): boolean {
    if (typeof id !== "string" || !HEX.test(id)) return false;
    const head = id.slice(0, 18);
    const tag = this.mac(head, resourceId);
    const want = `${"89ab"[parseInt(tag.slice(0, 1), 16) % 4]}${tag.slice(1, 4)}-${tag.slice(4, 16)}`;
    const got = id.slice(19).toLowerCase();
    return got.length === want.length && timingSafeEqual(Buffer.from(got), Buffer.from(want));
  }
}
