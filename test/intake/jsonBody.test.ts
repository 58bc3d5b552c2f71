import { HttpRequest } from "@azure/functions";
import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, readJsonBody } from "../../src/intake/jsonBody";

/** src/intake/jsonBody.ts: a request body is read as JSON only when it says it is, and only up to a size. */
const put = (body: string | Uint8Array, headers: Record<string, string> = { "content-type": "application/json" }) =>
  new HttpRequest({
    method: "PUT",
    url: "http://h/api/memberships",
    headers,
    body: typeof body === "string" ? { string: body } : { bytes: body },
  });

describe("readJsonBody", () => {
  it("reads a JSON body of type application/json (any casing, utf-8 charset)", async () => {
    expect(await readJsonBody(put('{"state":"present"}'))).toEqual({ ok: true, value: { state: "present" } });
    const typed = put("[1]", { "content-type": 'Application/JSON; charset="UTF-8"' });
    expect(await readJsonBody(typed)).toEqual({ ok: true, value: [1] });
  });

  it("refuses another media type or charset 415, naming what was sent", async () => {
    const form = await readJsonBody(put("a=1", { "content-type": "application/x-www-form-urlencoded" }));
    expect(form).toMatchObject({ ok: false, problem: { status: 415, code: "unsupported_media_type" } });
    expect(!form.ok && form.problem.message).toBe(
      "content-type must be application/json, not application/x-www-form-urlencoded",
    );
    // A string body sent without a type (fetch's default) arrives as text/plain.
    const untyped = await readJsonBody(put("{}", {}));
    expect(!untyped.ok && untyped.problem.message).toBe("content-type must be application/json, not text/plain");
    const latin = await readJsonBody(put("{}", { "content-type": "application/json; charset=iso-8859-1" }));
    expect(!latin.ok && latin.problem.message).toBe("content-type charset must be utf-8, not iso-8859-1");
  });

  it("refuses a body over the limit 413, by its bytes even when no Content-Length says so", async () => {
    const big = `{"pad":"${"x".repeat(MAX_BODY_BYTES)}"}`;
    // Chunked: a request whose headers carry no length.
    const chunked = {
      headers: new Headers({ "content-type": "application/json" }),
      arrayBuffer: () => put(big).arrayBuffer(),
    };
    const got = await readJsonBody(chunked);
    expect(got).toMatchObject({ ok: false, problem: { status: 413, code: "body_too_large" } });
    expect(!got.ok && got.problem.message).toBe(`body is ${big.length} bytes, over the ${MAX_BODY_BYTES}-byte limit`);
    const declared = put("{}", { "content-type": "application/json", "content-length": String(MAX_BODY_BYTES + 1) });
    expect(await readJsonBody(declared)).toMatchObject({ ok: false, problem: { status: 413 } });
  });

  it("refuses an empty body, bytes that are not UTF-8, and text that is not JSON, each 400 saying which", async () => {
    const reasons = await Promise.all(
      [put(""), put(new Uint8Array([0x7b, 0xff, 0x7d])), put("{state:")].map(async (r) => {
        const got = await readJsonBody(r);
        return got.ok ? "accepted" : `${got.problem.status} ${got.problem.code} ${got.problem.message}`;
      }),
    );
    expect(reasons[0]).toBe("400 invalid_json body is empty; send a JSON object");
    expect(reasons[1]).toBe("400 invalid_json body is not valid UTF-8");
    expect(reasons[2]).toMatch(/^400 invalid_json body is not valid JSON: /);
  });
});
