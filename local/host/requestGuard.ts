import { timingSafeEqual } from "node:crypto";

/**
 * What keeps the local runtime safe to run on a developer's machine (issue 26): it listens on loopback unless told
 * otherwise, answers only requests addressed to a name it serves (a page of another site that rebinds its DNS name to
 * 127.0.0.1 sends its own name as Host), takes bodies no larger than the Functions host does, and checks the keys the
 * host checks: the Event Grid extension's key on the webhook, a function key on function-level routes when one is set.
 */

/** Kestrel's MaxRequestBodySize in the Functions host (100 MiB): larger bodies are refused with 413. */
export const MAX_REQUEST_BODY_BYTES = 104_857_600;

export function isLoopbackName(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The hostname of a Host header (`name`, `name:port`, `[v6]:port`), lower case; undefined when malformed. */
export function hostOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i.exec(header.trim());
  return m ? m[1]!.toLowerCase() : undefined;
}

/**
 * A Host the runtime serves: a loopback name, or (listening beyond loopback on purpose) the listen address or a
 * name in `allowedHosts`.
 */
export function hostAllowed(
  header: string | undefined,
  o: { listenHost: string; allowRemote: boolean; allowedHosts: readonly string[] },
): boolean {
  const h = hostOf(header);
  if (h === undefined) return false;
  if (isLoopbackName(h)) return true;
  if (!o.allowRemote) return false;
  return h === o.listenHost.toLowerCase() || o.allowedHosts.some((a) => a.toLowerCase() === h);
}

/** Constant-time comparison of a presented key with the expected one. */
export function keyMatches(presented: string | undefined | null, expected: string): boolean {
  if (!presented) return false;
  const a = Buffer.from(presented, "utf8");
  const b = Buffer.from(expected, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
