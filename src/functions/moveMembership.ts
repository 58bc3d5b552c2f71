import "../app/telemetryStart";
import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { services } from "../app/services";
import { httpAuthLevel } from "../config";
import { handleMove } from "../intake/moveHttp";

/** PUT moves a target from one pool to another in one write per resource (see src/intake/moveHttp.ts, docs/api.md). */
export async function moveMembership(request: HttpRequest): Promise<HttpResponseInit> {
  return handleMove(request, services());
}

app.http("moveMembership", {
  route: "memberships/move",
  methods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
  authLevel: httpAuthLevel(),
  handler: moveMembership,
});
