import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { parseScaleSetId, parseTargetId } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { wantsHtml } from "./contentNegotiation";
import { scopeProblem } from "./declareRequest";
import { isStorageFailure, type IntakeServices } from "./intakeServices";
import { jsonResponse, methodNotAllowed, problem, problemResponse } from "./problem";
import { authorize, ROLES } from "./principal";
import { readQueryFlags } from "./queryFlags";
import { renderStatusPage, STATUS_PAGE_CSP } from "./statusPage";
import { statusReport } from "./statusReport";

type Request = Pick<HttpRequest, "query" | "headers" | "url"> & Partial<Pick<HttpRequest, "method">>;

export const STATUS_METHODS = ["GET"] as const;

const truthy = (v: string | null) => v !== null && ["1", "true", "yes", ""].includes(v.toLowerCase());

/**
 * JSON by default; the page for a browser. `?poison=1` adds the poison messages to the JSON (the page always shows
 * them).
 * Long: one HTTP handler: content negotiation, query flags and the two renderings of one report.
 */
export async function handleStatus(request: Request, s: IntakeServices): Promise<HttpResponseInit> {
  const auth = authorize(request.headers, s.config, ROLES.read);
  if (!auth.ok) {
    s.log.warn("status.unauthorized", { status: auth.problem.status, reason: auth.problem.message });
    return problemResponse(auth.problem);
  }
  if (request.method !== undefined && request.method !== "GET")
    return problemResponse(methodNotAllowed(request.method, STATUS_METHODS));
  const read = readQueryFlags(request.query, ["targetId", "scaleSetId", "format", "poison"]);
  if (!read.ok) return problemResponse(read.problem);
  const flags = read.value;
  const page = wantsHtml(request.headers.get("accept"), flags.format);
  // ?targetId= (a scale set or a VM) beside ?scaleSetId=, as GET /api/memberships takes them.
  const field = flags.targetId ? "targetId" : "scaleSetId";
  const rawScaleSet = flags[field];
  let scaleSet;
  if (rawScaleSet) {
    const ref = field === "targetId" ? parseTargetId(rawScaleSet) : parseScaleSetId(rawScaleSet);
    if (!ref.ok) return problemResponse(problem(400, "invalid_field", `${field}: ${ref.reason}`, field));
    if (!inScopes(s.config.scopes, ref.value.subscriptionId, ref.value.resourceGroup))
      return problemResponse(scopeProblem(field, ref.value.id, s.config.scopes));
    scaleSet = ref.value;
  }
  try {
    await s.ready();
    const report = await statusReport(
      {
        declarations: s.declarations,
        cache: s.cache,
        problems: s.problems,
        queue: s.queue,
        now: s.clock.now,
        cacheTtlMs: s.config.cacheTtlMs,
        ...(s.timerState ? { timerState: s.timerState } : {}),
        ...(s.unheld ? { events: s.unheld } : {}),
        ...(s.censusSummary ? { censusSummary: s.censusSummary } : {}),
        ...(s.drifts ? { drifts: s.drifts } : {}),
        ...(s.history ? { history: s.history } : {}),
      },
      { ...(scaleSet ? { scaleSet } : {}), includePoison: page || truthy(flags.poison) },
    );
    if (!page) return jsonResponse(200, report);
    // The JSON link keeps the query but never a function key (?code=): a page is copied, shared and screenshotted.
    const json = new URL(request.url);
    for (const name of [...json.searchParams.keys()])
      if (["code", "format"].includes(name.toLowerCase())) json.searchParams.delete(name);
    json.searchParams.set("format", "json");
    return {
      status: 200,
      body: renderStatusPage(report, { jsonHref: `${json.pathname}${json.search}` }),
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": STATUS_PAGE_CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
      },
    };
  } catch (err) {
    if (!isStorageFailure(err)) throw err;
    s.log.error("status.storage-error", { error: (err as Error).message });
    // The storage error is in the log, not the answer: it can name accounts, endpoints and request ids.
    return problemResponse(
      problem(503, "storage_unavailable", "storage is unavailable; try again", undefined, { "retry-after": "5" }),
    );
  }
}
