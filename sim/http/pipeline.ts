// The path of one ARM request: latency, authentication, api-version, routing, stats, faults, throttling (ARM's buckets,
// then CRP's), the interleaved writer, the handler, ETags as the api-version has them, and the common response headers.
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { carriesEtags } from "../apiVersions";
import type { SimCore } from "../core";
import { ArmError, missingApiVersion, unauthorized } from "../errors";
import { claimsFromToken } from "../events";
import { isJsonObject, type Json, type JsonObject } from "../json";
import type { BucketRef } from "../throttle";
import { resolveRoute, type Route } from "./compute";
import { apiVersionError, networkBudgetOf, registrationOf } from "./registration";
import { transientRetryableError } from "../nrpOperations";
import { DROP, fromArmError, json, type Answer, type Reply, type RequestContext } from "./reply";

export interface RawRequest {
  method: string;
  url: URL;
  base: string;
  headers: IncomingHttpHeaders;
  bodyText: string;
  clientIp: string;
}

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

export async function handleArmRequest(core: SimCore, raw: RawRequest): Promise<Answer> {
  const correlationId = header(raw.headers, "x-ms-correlation-request-id") ?? randomUUID();
  const common: Record<string, string> = {
    "x-ms-request-id": randomUUID(),
    "x-ms-correlation-request-id": correlationId,
    "cache-control": "no-cache",
  };
  const answer = await answerArmRequest(core, raw, correlationId);
  if (answer === DROP) return DROP;
  core.spec?.check({
    method: raw.method,
    pathname: raw.url.pathname,
    apiVersion: raw.url.searchParams.get("api-version") ?? "",
    requestText: raw.bodyText,
    status: answer.status,
    responseBody: answer.body,
  });
  return { ...answer, headers: { ...common, ...answer.headers } };
}

async function answerArmRequest(core: SimCore, raw: RawRequest, correlationId: string): Promise<Answer> {
  const { settings, clock } = core;
  const latency = settings.latency.fixedMs + settings.latency.jitterMs * core.random();
  if (latency > 0) await clock.sleep(latency);
  clock.runDue();

  const auth = /^Bearer\s+(\S+)/i.exec(header(raw.headers, "authorization") ?? "");
  if (!auth?.[1]) return fromArmError(unauthorized());
  const apiVersion = raw.url.searchParams.get("api-version");
  if (!apiVersion) return fromArmError(missingApiVersion());

  const headers: Record<string, string | undefined> = {};
  for (const k of Object.keys(raw.headers)) headers[k] = header(raw.headers, k);
  const ctx: RequestContext = {
    method: raw.method,
    url: raw.url,
    base: raw.base,
    headers,
    bodyText: raw.bodyText,
    apiVersion,
    etags: true,
    token: auth[1],
    clientRequestId: header(raw.headers, "x-ms-client-request-id") ?? randomUUID(),
    correlationId,
    clientIp: raw.clientIp,
  };
  const route = resolveRoute(core.engine, ctx);
  core.stats.request(route.kind, route.statsKey);
  const finish = (reply: Reply): Reply => {
    core.stats.status(reply.status, route.statsKey);
    return reply;
  };

  // ARM checks the api-version against the type's registration before any provider (or fault) sees the request.
  const registration = registrationOf(core.engine, raw.url.pathname);
  const versionError = registration && apiVersionError(core.engine, registration, apiVersion);
  if (versionError) return finish(fromArmError(versionError));

  const fault = core.faults.take(raw.method, raw.url.pathname);
  ctx.etags = !route.compute || carriesEtags(apiVersion);
  if (fault) {
    if (fault.delayMs > 0) await clock.sleep(fault.delayMs);
    if (!fault.afterWrite) {
      if (fault.drop) return DROP;
      if (fault.answer) return finish(fault.answer);
    }
  }

  const network = registration && networkBudgetOf(registration, raw.method);
  const throttled = admit(core, route, ctx, network);
  if (!throttled.ok) return finish(throttled.reply);
  // NRP's transient failures (a setting): the write is not taken, the client is told to come back.
  if (network?.kind === "writes" && core.nrpRandom() < core.settings.nrpTransientFailureRate) {
    throttled.refund();
    return finish(fromArmError(transientRetryableError(core.settings.nrpRetryAfterSeconds)));
  }

  // The interleaved writer changes the resource just before this write reaches it.
  if (route.writeTarget) {
    // Its write has come and gone (operation ended) before ours: ours meets its ETag, not its operation.
    const target = route.writeTarget;
    core.interleaver.applyDue(target, (mutate) => {
      try {
        core.engine.writeAs(target, mutate, undefined, 0);
        return true;
      } catch (e) {
        if (e instanceof ArmError) return false;
        throw e;
      }
    });
    clock.runDue();
  }

  let reply: Reply;
  try {
    reply = route.handle(ctx);
  } catch (e) {
    if (!(e instanceof ArmError)) throw e;
    reply = fromArmError(e);
  }
  if (reply.charge === 0) throttled.refund();
  if (reply.views !== undefined) throttled.chargeViews(reply.views - 1);
  reply = { ...reply, headers: { ...throttled.headers, ...reply.headers } };
  if (!ctx.etags || fault?.stripEtag) reply = withoutEtags(reply);

  if (fault?.afterWrite) {
    if (fault.answer) return finish(fault.answer);
    finish(reply);
    return DROP; // the write happened; its answer is lost
  }
  return finish(reply);
}

type Admitted =
  | { ok: true; headers: Record<string, string>; refund: () => void; chargeViews: (n: number) => void }
  | { ok: false; reply: Reply };

/** An answer as an api-version without ETags (or a stripEtag fault) gives it: no ETag header, no etag in the body. */
function withoutEtags(reply: Reply): Reply {
  const { etag: _header, ...headers } = reply.headers;
  const strip = (b: Json | undefined): Json | undefined => {
    if (!isJsonObject(b)) return b;
    const { etag: _body, ...rest } = b;
    const value = rest["value"];
    return Array.isArray(value) ? { ...rest, value: value.map((v) => strip(v) ?? null) } : rest;
  };
  const body = strip(reply.body);
  return { ...reply, headers, ...(body !== undefined ? { body } : {}) };
}

/** The principal ARM keys its buckets by: the token's object ID or application ID, else the token itself. */
function principalOf(token: string): string {
  const claims = claimsFromToken(token, {});
  return claims["oid"] ?? claims["appid"] ?? token;
}

/** ARM's subscription buckets first, then NRP's or CRP's buckets for the route. */
function admit(
  core: SimCore,
  route: Route,
  ctx: RequestContext,
  network: ReturnType<typeof networkBudgetOf>,
): Admitted {
  const now = core.clock.now();
  const headers: Record<string, string> = {};
  const refunds: (() => void)[] = [];
  if (route.subscriptionId && core.settings.armThrottling) {
    const arm = core.throttler.admitArm(route.arm, route.subscriptionId, principalOf(ctx.token), now);
    headers[`x-ms-ratelimit-remaining-subscription-${route.arm}`] = String(arm.remaining);
    // ARM's answers in 2026 also carry the whole subscription's count (recorded: 3749 = 15 × 250 less one read).
    headers[`x-ms-ratelimit-remaining-subscription-global-${route.arm}`] = String(arm.globalRemaining);
    if (!arm.ok) {
      const n = arm.retryAfterSeconds ?? 1;
      return {
        ok: false,
        reply: json(
          429,
          {
            error: {
              code: "SubscriptionRequestsThrottled",
              message: `Number of '${route.arm.replace(/s$/, "")}' requests for subscription '${route.subscriptionId}' actioned by tenant '${core.settings.tenantId}' exceeded. Please try again after '${n}' seconds after additional tokens are available. Refer to https://aka.ms/arm-throttling for additional information.`,
            },
          },
          { ...headers, "retry-after": String(n) },
        ),
      };
    }
    refunds.push(arm.refund);
  }
  if (network) {
    const n = core.throttler.admitNetwork(network.kind, network.regionKey, now);
    if (!n.ok) {
      refunds.forEach((r) => r());
      const wait = n.retryAfterSeconds ?? 1;
      return { ok: false, reply: nrpThrottled(network.operation, n.allowed, wait, headers) };
    }
    refunds.push(n.refund);
  }
  let chargeViews = (_n: number): void => undefined;
  if (route.policy) {
    const a = core.throttler.admitCompute(route.policy.names, route.policy.resourceKey, route.policy.regionKey, now);
    if (a.remainingHeader) headers["x-ms-ratelimit-remaining-resource"] = a.remainingHeader;
    if (!a.ok) {
      refunds.forEach((r) => r());
      const n = a.retryAfterSeconds ?? 1;
      return {
        ok: false,
        reply: json(429, throttleBody(core, a.refusedBy ?? [], now), { ...headers, "retry-after": String(n) }),
      };
    }
    refunds.push(a.refund);
    if (route.policy.names.includes("VMScaleSetVMViews")) chargeViews = (n) => a.charge("VMScaleSetVMViews", n);
  }
  return { ok: true, headers, refund: () => refunds.forEach((r) => r()), chargeViews };
}

/** NRP's 429 when a subscription's 5-minute budget is spent (Azure/azure-sdk-for-net issue 45317). */
function nrpThrottled(operation: string, allowed: number, retryAfter: number, headers: Record<string, string>): Reply {
  return json(
    429,
    {
      error: {
        code: "RetryableError",
        message: "A retryable error occurred.",
        details: [
          {
            code: "RetryableErrorDueToTooManyCallsToThisOperation",
            message: `Operation ${operation} exceeded throttling limit of ${allowed} calls within last 5 minutes. The number of calls exceeds Microsoft.Network throttling limit. The call can be retried in ${retryAfter} seconds.`,
          },
        ],
      },
    },
    { ...headers, "retry-after": String(retryAfter) },
  );
}

/** CRP's 429 body as recorded: top-level code, one detail per empty bucket, or in ARM's error envelope when the
 *  setting says so. */
function throttleBody(core: SimCore, refused: BucketRef[], now: number): JsonObject {
  const inner: JsonObject = {
    code: "OperationNotAllowed",
    message: "The server rejected the request because too many requests have been received for this subscription.",
    details: refused.map((r) => ({
      code: "TooManyRequests",
      target: r.policy,
      message: JSON.stringify({
        operationGroup: r.policy,
        startTime: new Date(now - r.windowMs).toISOString(),
        endTime: new Date(now).toISOString(),
        allowedRequestCount: r.allowed,
        measuredRequestCount: r.allowed + 1,
      }),
    })),
  };
  return core.settings.throttleBodyEnvelope ? { error: inner } : inner;
}
