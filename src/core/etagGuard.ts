import { PoolsyncError } from "./errors";

/**
 * poolsync writes only with If-Match. An answer without an ETag is real (api-versions before 2023-09-01, and
 * "No ETag in VM GET" reported at 2023-09-01); writing then would be unconditional, the lost update this app exists to
 * prevent. So such a write is never sent: the declaration fails, and the timer tries again later.
 */
export class MissingEtagError extends PoolsyncError {
  readonly retriable = false;
  constructor(readonly resourceId: string) {
    super(`ARM returned no ETag for ${resourceId}; poolsync writes only with If-Match`);
  }
}

/** Throws MissingEtagError unless `etag` is a usable If-Match value. */
export function requireEtag(resourceId: string, etag: string | undefined): string {
  if (etag === undefined || etag.trim() === "") throw new MissingEtagError(resourceId);
  return etag;
}
