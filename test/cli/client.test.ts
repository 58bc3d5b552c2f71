import { afterEach, describe, expect, it } from "vitest";
import { ApiError, callApi, UnreachableError } from "../../src/cli/client";
import { recordingServer, type Answer, type RecordingServer } from "../support/recordingServer";

let server: RecordingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const answering = async (answer: Answer) => (server = await recordingServer(() => answer));

/** The error a call rejects with (the test fails when it resolves). */
async function refusal(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (v) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(v)}`);
    },
    (err: unknown) => err,
  );
}

describe("the CLI's API client", () => {
  it("sends the body as JSON with the key and the token, under the path of --url, and answers the JSON", async () => {
    const s = await answering({ status: 202, body: { requestId: "r-1" } });
    const answer = await callApi({ url: `${s.url}/base`, key: "k-1", token: "t-1" }, "PUT", "api/memberships", {
      state: "present",
    });
    expect(answer).toEqual({ requestId: "r-1" });
    const [r] = s.received;
    expect(r).toMatchObject({ method: "PUT", url: "/base/api/memberships", body: '{"state":"present"}' });
    expect(r?.headers).toMatchObject({
      "x-functions-key": "k-1",
      authorization: "Bearer t-1",
      "content-type": "application/json",
      accept: "application/json",
    });
  });

  it("turns the API's error body into an ApiError with its status, code and field", async () => {
    await answering({
      status: 400,
      body: { error: { code: "bad_request", message: "pool: not an ID", field: "backendPoolId" } },
    });
    const err = await refusal(callApi({ url: server!.url }, "GET", "api/status"));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, code: "bad_request", message: "pool: not an ID", field: "backendPoolId" });
  });

  it("tells a host's own 401 (no JSON body) apart, saying how to sign in", async () => {
    await answering({ status: 401, body: "" });
    const err = await refusal(callApi({ url: server!.url }, "GET", "api/status"));
    expect(err).toMatchObject({ status: 401, code: "http_401" });
    expect((err as Error).message).toMatch(
      /^GET \/api\/status answered 401 .*; sign in: pass an Entra token with --token/,
    );
  });

  it("refuses a success that is not JSON", async () => {
    await answering({ status: 200, body: "<html>a proxy's page</html>" });
    const err = await refusal(callApi({ url: server!.url }, "GET", "api/plan"));
    expect(err).toMatchObject({ status: 200, code: "not_json" });
  });

  it("says it cannot reach the app when nothing listens, naming the origin", async () => {
    const s = await answering({ status: 200, body: {} });
    await s.close();
    server = undefined;
    const err = await refusal(callApi({ url: s.url }, "GET", "api/status"));
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as Error).message).toContain(`cannot reach poolsync at ${s.url} (ECONNREFUSED); is it running?`);
  });

  it("gives up on a redirect loop after five hops", async () => {
    await answering({ status: 302, headers: { location: "/again" } });
    const err = await refusal(callApi({ url: server!.url }, "GET", "api/status"));
    expect((err as Error).message).toBe(`poolsync at ${server!.url} redirected more than 5 times`);
    expect(server!.received).toHaveLength(6);
  });
});
