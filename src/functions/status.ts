import "../app/telemetryStart";
import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { services } from "../app/services";
import { httpAuthLevel } from "../config";
import { handleStatus } from "../intake/statusHttp";

/** Counts, stale entries, queue depth and poison as JSON, or the status page for Accept: text/html (see src/intake). */
export async function status(request: HttpRequest): Promise<HttpResponseInit> {
  return handleStatus(request, services());
}

// PUT, POST, PATCH and DELETE are routed here only to be answered 405 with Allow: the host would give them a bare 404.
app.http("status", {
  route: "status",
  methods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
  authLevel: httpAuthLevel(),
  handler: status,
});
