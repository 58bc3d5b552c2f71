import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { parseComputeId } from "../core/resourceIds";
import { READ_BUDGET } from "../core/tokenBucket";
import type { RateLimitObservation } from "../pacing/learnWriteBudget";

/**
 * What ARM's and CRP's answers say is left of their budgets: `x-ms-ratelimit-remaining-subscription-reads/-writes`
 * (ARM's buckets of this subscription and principal) and `x-ms-ratelimit-remaining-resource` (CRP's buckets, e.g.
 * `Microsoft.Compute/CreateVMScaleSetResource;11,Microsoft.Compute/CreateVMScaleSetSubscriptionMaximum;1490`). The
 * server counts every caller of the same principal, every host of the app included, so these figures are the budget
 * the pacers share without talking to each other.
 */

/**
 * CRP's policy names of the writes poolsync makes: a VMSS PUT is charged to CreateVMScaleSet, a VM PUT to
 * UpdateVMScaleSetVM (PutVM in the published samples). Two naming families are seen: `<Policy>Resource` /
 * `<Policy>SubscriptionMaximum` (the target's own bucket, the subscription's) and `<Policy>3Min` / `<Policy>30Min`
 * (the subscription's windows, as every public sample names them). Any other name is not a write budget we pace.
 */
const CRP_WRITE_POLICIES: Array<{ pattern: RegExp; kind: "scaleSetWrites" | "instanceWrites" }> = [
  {
    pattern: /^Microsoft\.Compute\/(?:Create|Update|Put)VMScaleSet(Resource|SubscriptionMaximum|3Min|30Min)$/i,
    kind: "scaleSetWrites",
  },
  {
    pattern: /^Microsoft\.Compute\/(?:(?:Update|Put)VMScaleSetVM|PutVM)(Resource|SubscriptionMaximum|3Min|30Min)$/i,
    kind: "instanceWrites",
  },
];

/** `Policy;count,Policy;count` → [policy, count] pairs; malformed parts are skipped (the header is advisory). */
export function parseRemainingResource(header: string): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (const part of header.split(",")) {
    const m = /^\s*([^;]+);\s*(\d+)\s*$/.exec(part);
    if (m) out.push([m[1] as string, Number(m[2])]);
  }
  return out;
}

/** Every observation one answer carries, for the ARM resource at `path` (a URL path, query stripped). */
export function observationsOf(
  method: string,
  path: string,
  header: (name: string) => string | undefined,
): RateLimitObservation[] {
  const out: RateLimitObservation[] = [];
  const sub = /^\/subscriptions\/([^/]+)/i.exec(path)?.[1]?.toLowerCase();
  if (!sub) return out;
  for (const kind of ["reads", "writes"] as const) {
    const raw = header(`x-ms-ratelimit-remaining-subscription-${kind}`);
    if (raw !== undefined && /^\d+$/.test(raw.trim()))
      out.push({ kind: kind === "reads" ? "armReads" : "armWrites", subscriptionId: sub, remaining: Number(raw) });
  }
  const resource = header("x-ms-ratelimit-remaining-resource");
  if (resource && method !== "GET") {
    const target = parseComputeId(decodeURIComponent(path));
    if (target.ok) {
      for (const [policy, remaining] of parseRemainingResource(resource)) {
        for (const p of CRP_WRITE_POLICIES) {
          const m = p.pattern.exec(policy);
          const fits =
            p.kind === "scaleSetWrites" ? target.value.kind === "scaleSet" : target.value.kind === "instance";
          if (m && fits)
            out.push({
              kind: p.kind,
              scope: /^resource$/i.test(m[1] as string) ? "resource" : "subscription",
              ...(/^3Min$/i.test(m[1] as string) ? { window: "3Min" as const } : {}),
              ...(/^30Min$/i.test(m[1] as string) ? { window: "30Min" as const } : {}),
              target: target.value,
              remaining,
            });
        }
      }
    }
  }
  return out;
}

/** The pipeline policy: hands every answer's observations to `learn` (after the answer, before the caller sees it). */
export function rateLimitHeadersPolicy(learn: (o: RateLimitObservation) => void): PipelinePolicy {
  return {
    name: "poolsyncRateLimitHeaders",
    sendRequest: async (request, next) => {
      const response = await next(request);
      const path = new URL(request.url).pathname;
      for (const o of observationsOf(request.method, path, (name) => response.headers.get(name) ?? undefined)) learn(o);
      return response;
    },
  };
}

/** ARM's documented read bucket; the read pacer's holds 10 % fewer, and keeps that margin below what ARM reports. */
const ARM_READS_BUCKET = 250;
export const ARM_READS_MARGIN = ARM_READS_BUCKET - READ_BUDGET.capacity;
