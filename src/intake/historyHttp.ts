import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { HISTORY_MAX_ENTRIES } from "../core/history";
import { isStorageFailure, type IntakeServices } from "./intakeServices";
import { jsonResponse, problem, problemResponse } from "./problem";
import { readTargetQuery } from "./targetQuery";

export const HISTORY_METHODS = ["GET"] as const;

/**
 * `GET /api/history?targetId=…[&limit=50][&cursor=…]` (poolsync.Read): a target's timeline, newest first, a page at a
 * time.
 */
export async function handleHistory(
  request: Pick<HttpRequest, "method" | "query" | "headers">,
  s: IntakeServices,
): Promise<HttpResponseInit> {
  const target = readTargetQuery(request, s, HISTORY_METHODS, ["limit", "cursor"]);
  if (!target.ok) return target.response;
  const limitText = target.flags.limit;
  const limit = limitText === null ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_ENTRIES)
    return problemResponse(
      problem(400, "invalid_field", `limit: must be a whole number from 1 to ${HISTORY_MAX_ENTRIES}`, "limit"),
    );
  const cursor = target.flags.cursor ?? undefined;
  if (cursor !== undefined && !/^h\|\d{13}\|[0-9a-f]{8}$/.test(cursor))
    return problemResponse(problem(400, "invalid_field", "cursor: not one this API gave", "cursor"));
  if (!s.history) return problemResponse(problem(503, "storage_unavailable", "history is not available on this host"));
  try {
    await s.ready();
    const page = await s.history.page(target.ref.id, limit, cursor);
    return jsonResponse(200, { targetId: target.ref.id, ...page });
  } catch (err) {
    if (!isStorageFailure(err)) throw err;
    return problemResponse(
      problem(503, "storage_unavailable", "storage is unavailable; try again", undefined, { "retry-after": "5" }),
    );
  }
}
