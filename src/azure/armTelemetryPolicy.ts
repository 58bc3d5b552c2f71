import type { PipelinePolicy, PipelineResponse } from "@azure/core-rest-pipeline";
import { recordArmRequest, recordThrottled } from "../telemetry/metrics";
import { setBudgetRemaining } from "../telemetry/gauges";
import { parseRemainingResource } from "./rateLimitHeaders";

/**
 * One pipeline policy per ARM client (after the SDK's retry phase, so each try is one request): every answer becomes
 * poolsync.arm.requests and .request.duration, a 412 poolsync.arm.precondition_failed, a 429 or a concurrent-operation
 * 409 poolsync.arm.throttled, and the remaining-budget headers poolsync.arm.budget.remaining.
 */

/** `Microsoft.Compute/virtualMachineScaleSets/virtualMachines` from a resource or collection path. */
export function resourceTypeOf(path: string): { type: string; named: boolean } {
  const m = /\/providers\/(.+)$/i.exec(path);
  if (!m) return { type: "subscription", named: false };
  const segs = (m[1] as string).split("/").filter(Boolean);
  const ns = segs[0] ?? "";
  const types: string[] = [];
  for (let i = 1; i < segs.length; i += 2) types.push(segs[i] as string);
  return { type: [ns, ...types].join("/"), named: segs.length % 2 === 1 && segs.length > 1 };
}

const KINDS: Array<[RegExp, string]> = [
  [/\/operations$|\/operationresults$/i, "operation"],
  [/virtualMachineScaleSets\/virtualMachines$/i, "instance"],
  [/virtualMachineScaleSets$/i, "scaleSet"],
  [/virtualMachines$/i, "vm"],
  [/networkInterfaces$/i, "nic"],
];

export function armOperationOf(method: string, path: string): { operation: string; kind: string } {
  const { type, named } = resourceTypeOf(path);
  const kind = KINDS.find(([p]) => p.test(type))?.[1] ?? "other";
  return {
    operation: `${method.toUpperCase()} ${type}${named || kind === "operation" ? "" : " (list)"}`,
    kind: named || kind === "operation" ? kind : "list",
  };
}

/** What ran out: the CRP policy the answer reports at 0, else ARM's subscription bucket for the method. */
export function exhaustedBucket(method: string, remainingResource: string | undefined): string {
  const empty = parseRemainingResource(remainingResource ?? "").find(([, n]) => n === 0);
  if (empty) return empty[0];
  return method.toUpperCase() === "GET" ? "subscription-reads" : "subscription-writes";
}

function observeBudgets(path: string, response: PipelineResponse): void {
  const sub = /^\/subscriptions\/([^/]+)/i.exec(path)?.[1]?.toLowerCase();
  if (!sub) return;
  for (const kind of ["reads", "writes"]) {
    const raw = response.headers.get(`x-ms-ratelimit-remaining-subscription-${kind}`);
    if (raw !== undefined && /^\d+$/.test(raw.trim())) setBudgetRemaining(`subscription-${kind}`, sub, Number(raw));
  }
  for (const [policy, remaining] of parseRemainingResource(
    response.headers.get("x-ms-ratelimit-remaining-resource") ?? "",
  )) {
    setBudgetRemaining(policy, sub, remaining);
  }
}

export function armTelemetryPolicy(now: () => number = () => performance.now()): PipelinePolicy {
  return {
    name: "poolsyncArmTelemetry",
    sendRequest: async (request, next) => {
      const started = now();
      const path = new URL(request.url).pathname;
      const { operation, kind } = armOperationOf(request.method, path);
      let response: PipelineResponse;
      try {
        response = await next(request);
      } catch (err) {
        // No answer (timeout, reset): status 0, so the request still counts and the error rate sees it.
        const status = (err as { statusCode?: number }).statusCode ?? 0;
        recordArmRequest({ operation, status, kind, durationMs: now() - started });
        throw err;
      }
      const status = response.status;
      recordArmRequest({ operation, status, kind, durationMs: now() - started });
      if (status === 429)
        recordThrottled(
          "429",
          exhaustedBucket(request.method, response.headers.get("x-ms-ratelimit-remaining-resource")),
          operation,
        );
      // A 409 is CRP's "another operation is in progress" unless it says the resource is being deleted (armErrors.ts).
      else if (status === 409 && !/marked for deletion|being deleted/i.test(response.bodyAsText ?? ""))
        recordThrottled("concurrent-409", `${kind}-operations`, operation);
      observeBudgets(path, response);
      return response;
    },
  };
}
