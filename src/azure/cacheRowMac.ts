import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * A cached model is the base of the next write (the NIC array is sent whole, a NIC body is PUT whole), and If-Match
 * proves only the ETag: whoever can write the table could copy the current ETag beside a body of their own and have
 * poolsync write it with poolsync's identity. So each row poolsync stores carries an HMAC-SHA256, with a key only the
 * app holds, over what names it and what a write is built from: its keys, resource ID, ARM ETag, the instance's vouch
 * and the model's bytes. A row whose MAC does not verify is a miss (re-read from ARM), never a base.
 */

export const MAC_COLUMN = "mac";

export interface MacFields {
  partitionKey: string;
  rowKey: string;
  resourceId: string;
  armEtag: string;
  listedUnder: string;
  /** The model as stored: a JSON string, or the gzip chunks. */
  model: string;
  chunks: Uint8Array[];
}

/** Without POOLSYNC_CACHE_KEY: one random key for this process, so rows other processes stored read as misses. */
const PROCESS_KEY = randomBytes(32);

export class CacheRowMac {
  private readonly key: Buffer;

  /** `key` empty: this process's random key. */
  constructor(key: string) {
    this.key = key === "" ? PROCESS_KEY : Buffer.from(key, "utf8");
  }

  sign(f: MacFields): string {
    const h = createHmac("sha256", this.key);
    // Length-prefixed, so no two different field lists hash the same bytes.
    const part = (b: Buffer) => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length);
      h.update(len).update(b);
    };
    for (const s of [f.partitionKey, f.rowKey, f.resourceId.toLowerCase(), f.armEtag, f.listedUnder, f.model])
      part(Buffer.from(s, "utf8"));
    part(Buffer.from(String(f.chunks.length)));
    for (const c of f.chunks) part(Buffer.from(c));
    return h.digest("base64");
  }

  verify(f: MacFields, mac: unknown): boolean {
    if (typeof mac !== "string" || mac === "") return false;
    const want = Buffer.from(this.sign(f), "base64");
    const got = Buffer.from(mac, "base64");
    return got.length === want.length && timingSafeEqual(got, want);
  }
}
