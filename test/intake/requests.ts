import { HttpRequest, type HttpResponseInit } from "@azure/functions";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import { parseDeclareRequest, type DeclareRequest } from "../../src/intake/declareRequest";
import type { Harness } from "../support/harness";

/** Requests and answers for the unit tests that call the intake's handlers with a harness's real services. */

export const API = "http://127.0.0.1/api";

export const putJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  new HttpRequest({
    method: "PUT",
    url,
    headers: { "content-type": "application/json", ...headers },
    body: { string: JSON.stringify(body) },
  });

export const request = (method: string, url: string, headers: Record<string, string> = {}) =>
  new HttpRequest({ method, url, headers });

export const errorOf = (res: HttpResponseInit) =>
  (res.jsonBody as { error: { code: string; message: string; field?: string } }).error;

/** Each answer's status, error code and field, in the order the requests were given. */
export const refusals = (answers: Promise<HttpResponseInit>[]) =>
  Promise.all(
    answers.map(async (p) => {
      const res = await p;
      return [res.status, errorOf(res).code, errorOf(res).field];
    }),
  );

/** A caller as App Service authentication presents it (base64 JSON claims in x-ms-client-principal). */
export const entraCaller = (id: string, name: string, roles: string[]) => ({
  "x-ms-client-principal": Buffer.from(
    JSON.stringify({
      claims: [{ typ: "oid", val: id }, { typ: "name", val: name }, ...roles.map((val) => ({ typ: "roles", val }))],
    }),
  ).toString("base64"),
});

/** A declaration's body parsed as the API parses it, under the harness's scopes and bindings. */
export function declareRequestOf(h: Harness, body: unknown): DeclareRequest {
  const r = parseDeclareRequest(body, h.config.scopes, h.config.bindings);
  if (!r.ok) throw new Error(`test bug: ${r.problem.message}`);
  return r.value;
}

/** A target ID the test made up or took from the demo world; a bad one is a bug in the test. */
export function targetRefOf(id: string): TargetRef {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(`test bug: ${id} ${r.reason}`);
  return r.value;
}
