import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { services } from "../app/services";
import { httpAuthLevel } from "../config";
import { handlePlan } from "../intake/planHttp";

/** What a reconcile of a target would write now; writes nothing (see src/intake/planHttp.ts, docs/api.md). */
export async function plan(request: HttpRequest): Promise<HttpResponseInit> {
  return handlePlan(request, services());
}

app.http("plan", {
  route: "plan",
  methods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
  authLevel: httpAuthLevel(),
  handler: plan,
});
