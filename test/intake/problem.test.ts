import { describe, expect, it } from "vitest";
import { jsonResponse, methodNotAllowed, problem, problemResponse } from "../../src/intake/problem";

/** src/intake/problem.ts: every refusal of the HTTP API has one shape a caller can branch on. */
describe("problem answers", () => {
  it("answer { error: { code, message, field } } with the status, never cached, with the problem's own headers", () => {
    const res = problemResponse(
      problem(429, "too_many_declarations", "over the cap", "state", { "retry-after": "60" }),
    );
    expect(res.status).toBe(429);
    expect(res.jsonBody).toEqual({ error: { code: "too_many_declarations", message: "over the cap", field: "state" } });
    expect(res.headers).toMatchObject({
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      "retry-after": "60",
    });
  });

  it("leave out a field the problem does not name, and carry ARM's own answer when it is why", () => {
    const res = problemResponse({
      ...problem(502, "arm_error", "ARM answered 400"),
      arm: { status: 400, code: "Bad" },
    });
    expect(res.jsonBody).toEqual({
      error: { code: "arm_error", message: "ARM answered 400", arm: { status: 400, code: "Bad" } },
    });
    expect(problem(400, "invalid_json", "x")).not.toHaveProperty("field");
  });

  it("answer a method the route does not take 405, naming the allowed ones in the message and in Allow", () => {
    const p = methodNotAllowed("DELETE", ["GET", "PUT"]);
    expect(p).toMatchObject({ status: 405, code: "method_not_allowed", headers: { allow: "GET, PUT" } });
    expect(p.message).toBe("method DELETE is not allowed here; use GET or PUT");
  });

  it("let a JSON answer's own headers override the defaults", () => {
    expect(jsonResponse(200, {}, { "cache-control": "max-age=5" }).headers).toMatchObject({
      "cache-control": "max-age=5",
    });
  });
});
