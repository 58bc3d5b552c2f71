import "../app/telemetryStart";
import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { services } from "../app/services";
import { httpAuthLevel } from "../config";
import { handleMemberships } from "../intake/membershipsHttp";
import { handleMove, unknownAction } from "../intake/moveHttp";

/**
 * PUT declares a membership, GET shows declared vs observed for a scale set; PUT …/memberships/move moves a target
 * between two pools in one write (see src/intake, docs/api.md).
 */
export async function memberships(request: HttpRequest): Promise<HttpResponseInit> {
  const action = request.params.action;
  if (action === undefined || action === "") return handleMemberships(request, services());
  if (action.toLowerCase() === "move") return handleMove(request, services());
  return unknownAction(action);
}

// POST, PATCH and DELETE are routed here only to be answered 405 with Allow: the host would give them a bare 404.
app.http("memberships", {
  route: "memberships/{action?}",
  methods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
  authLevel: httpAuthLevel(),
  handler: memberships,
});
