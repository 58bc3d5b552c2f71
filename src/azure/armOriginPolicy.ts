import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { FatalError } from "../core/errors";

/**
 * The ARM bearer token goes to ARM_ENDPOINT and nowhere else. A nextLink, a continuation token read back from
 * storage, an operation URL or a redirect can each name another host, and the SDK would send the token to it as
 * given: this policy runs last, after the token is attached (after the Sign phase, so redirects pass it too), and
 * refuses any request whose origin is not ARM_ENDPOINT's before a byte leaves.
 */

export const ARM_ORIGIN_POLICY = "poolsyncArmOriginPolicy";

/** Added to every ARM client's pipeline: `addPolicy(armOriginPolicy(endpoint), { afterPhase: "Sign" })`. */
export function armOriginPolicy(armEndpoint: string): PipelinePolicy {
  const allowed = new URL(armEndpoint).origin;
  return {
    name: ARM_ORIGIN_POLICY,
    sendRequest(request, next) {
      const origin = originOf(request.url);
      if (origin !== allowed) {
        // Terminal, never a requeue loop: classifyArmError passes poolsync's own errors through as they are.
        throw new FatalError(
          `refusing to send a request to ${origin ?? "an unparseable URL"}: ARM requests go only to ${allowed} (ARM_ENDPOINT)`,
        );
      }
      return next(request);
    },
  };
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * A stored continuation (the timer's `resume.nextLink`) is used only if it is on ARM_ENDPOINT and names exactly the
 * LIST it was saved for (`listPath`, compared without case as ARM compares paths); anything else is dropped and the
 * LIST starts again from its first page. The origin policy would refuse a foreign host anyway: this keeps a planted
 * link from steering the timer to another resource group or a different API inside ARM.
 */
export function continuationFor(link: string | undefined, armEndpoint: string, listPath: string): string | undefined {
  if (!link) return undefined;
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return undefined;
  }
  if (url.origin !== new URL(armEndpoint).origin) return undefined;
  if (url.username || url.password || url.hash) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(url.pathname).replace(/\/+$/, "").toLowerCase();
  } catch {
    return undefined; // a bad %-escape: not a link ARM gave
  }
  return path === listPath.replace(/\/+$/, "").toLowerCase() ? link : undefined;
}
