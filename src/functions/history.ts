import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { services } from "../app/services";
import { httpAuthLevel } from "../config";
import { handleHistory } from "../intake/historyHttp";

/** A target's timeline: declarations, writes, drifts, failures (see src/intake/historyHttp.ts, docs/api.md). */
export async function history(request: HttpRequest): Promise<HttpResponseInit> {
  return handleHistory(request, services());
}

app.http("history", {
  route: "history",
  methods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
  authLevel: httpAuthLevel(),
  handler: history,
});
