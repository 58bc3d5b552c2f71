import type { PipelinePolicy } from "@azure/core-rest-pipeline";

/**
 * The Compute api-version poolsync speaks, pinned: scale sets and their VMs carry ETags and honour If-Match only from
 * 2023-09-01 on (azure-rest-api-specs PR 26368); below it every answer lacks an ETag and every write would be
 * unconditional. This is the version @azure/arm-compute 24.x speaks; the policy keeps it whatever a later SDK build
 * defaults to, so changing it is a decision made here, with its test.
 */
export const COMPUTE_API_VERSION = "2026-03-01";
export const FIRST_COMPUTE_API_VERSION_WITH_ETAGS = "2023-09-01";

/** Sets api-version on every Compute request the client sends (operation polls and nextLinks included). */
export function pinComputeApiVersion(version = COMPUTE_API_VERSION): PipelinePolicy {
  return {
    name: "poolsyncPinComputeApiVersion",
    sendRequest(request, next) {
      const url = new URL(request.url);
      if (/\/providers\/Microsoft\.Compute\//i.test(url.pathname) && url.searchParams.get("api-version") !== version) {
        url.searchParams.set("api-version", version);
        request.url = url.toString();
      }
      return next(request);
    },
  };
}
