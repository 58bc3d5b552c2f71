import "../app/telemetryStart";
import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { services } from "../app/services";
import { httpAuthLevel } from "../config";
import { handleMemberships } from "../intake/membershipsHttp";

/** PUT declares a membership, GET shows declared vs observed for a scale set (see src/intake, docs/api.md). */
export async function memberships(request: HttpRequest): Promise<HttpResponseInit> {
  return handleMemberships(request, services());
}

// POST, PATCH and DELETE are routed here only to be answered 405 with Allow: the host would give them a bare 404.
app.http("memberships", {
  route: "memberships",
  methods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
  authLevel: httpAuthLevel(),
  handler: memberships,
});
