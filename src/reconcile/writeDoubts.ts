import type { WriteInDoubt } from "../core/control";

// Its own module: the If-Match loop records doubts and the pass vocabulary holds them, and vocabulary.ts reaches the
// If-Match loop through driftWatch and vmNics (an import cycle if this lived there).

/** Writes whose answer never came: they may still land while the resource keeps the ETag they were made on. */
export interface WriteDoubts {
  record(d: WriteInDoubt): void;
  /** How long a write of ours may still change `resourceId` at `etag` (0: none can). */
  remainingMs(resourceId: string, etag: string): number;
}
