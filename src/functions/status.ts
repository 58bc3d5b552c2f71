import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { services } from "../app/services";
import { handleStatus } from "../intake/statusHttp";

/** Counts, stale entries, queue depth and poison as JSON, or the status page for Accept: text/html (see src/intake). */
export async function status(request: HttpRequest): Promise<HttpResponseInit> {
  return handleStatus(request, services());
}

app.http("status", {
  route: "status",
  methods: ["GET"],
  authLevel: "function",
  handler: status,
});
