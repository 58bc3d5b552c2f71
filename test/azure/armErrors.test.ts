import { createHttpHeaders, createPipelineRequest, RestError } from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import { classifyArmError, retryAfterMs } from "../../src/azure/armErrors";
import {
  BeingDeletedError,
  ConflictError,
  FatalError,
  NotFoundError,
  PreconditionFailedError,
  ThrottledError,
  TransientError,
} from "../../src/core/errors";

/** An SDK error as the pipeline throws it for an ARM answer: status, headers, the ARM error body. */
function armAnswer(status: number, body: unknown, headers: Record<string, string> = {}): RestError {
  const request = createPipelineRequest({ url: "https://management.example.test/x" });
  const bodyAsText = typeof body === "string" ? body : JSON.stringify(body);
  return new RestError("the SDK's own text", {
    statusCode: status,
    code: "SdkCode",
    request,
    response: { status, headers: createHttpHeaders(headers), request, bodyAsText },
  });
}

const armError = (code: string, message: string) => ({ error: { code, message } });

describe("classifyArmError: one typed outcome per class of ARM answer", () => {
  it("412 is a precondition failure, with ARM's code and message", () => {
    const e = classifyArmError(armAnswer(412, armError("PreconditionFailed", "The ETag does not match.")), "PUT vmss");
    expect(e).toBeInstanceOf(PreconditionFailedError);
    expect(e.message).toBe("PUT vmss: 412 PreconditionFailed The ETag does not match.");
    expect(e.code).toBe("PreconditionFailed");
  });

  it("429 is throttled with Retry-After (seconds), else a minute", () => {
    const withHeader = classifyArmError(
      armAnswer(429, armError("TooManyRequests", "slow down"), { "retry-after": "17" }),
      "GET",
    );
    expect(withHeader).toBeInstanceOf(ThrottledError);
    expect((withHeader as ThrottledError).retryAfterMs).toBe(17_000);
    expect(
      (classifyArmError(armAnswer(429, armError("TooManyRequests", "x")), "GET") as ThrottledError).retryAfterMs,
    ).toBe(60_000);
  });

  it("404 is not found", () => {
    expect(classifyArmError(armAnswer(404, armError("ResourceNotFound", "gone")), "GET")).toBeInstanceOf(NotFoundError);
  });

  it("CRP's 400 'not an active ... instanceId' (a write to an instance scaled in) is the instance gone, not a bad request", () => {
    const body = {
      error: {
        code: "InvalidParameter",
        message: "The provided instanceId 3 is not an active Virtual Machine Scale Set VM instanceId.",
        target: "instanceIds",
      },
    };
    const gone = classifyArmError(armAnswer(400, body), "PUT instance 3");
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone).toMatchObject({ status: 400, code: "InvalidParameter" });
    // Any other 400 InvalidParameter stays a terminal answer about the request.
    expect(
      classifyArmError(
        armAnswer(400, armError("InvalidParameter", "Virtual Machine Scale Set VM instanceId must be a number.")),
        "GET",
      ),
    ).toBeInstanceOf(FatalError);
  });

  it("409 is a conflict to retry, unless the message says the resource is being deleted", () => {
    const busy = classifyArmError(
      armAnswer(409, armError("OperationNotAllowed", "Another operation is in progress."), { "retry-after": "3" }),
      "PUT",
    );
    expect(busy).toBeInstanceOf(ConflictError);
    expect((busy as ConflictError).retryAfterMs).toBe(3_000);
    expect((classifyArmError(armAnswer(409, armError("Conflict", "x")), "PUT") as ConflictError).retryAfterMs).toBe(
      5_000,
    );
    expect(
      classifyArmError(armAnswer(409, armError("OperationNotAllowed", "The scale set is marked for deletion.")), "PUT"),
    ).toBeInstanceOf(BeingDeletedError);
    expect(classifyArmError(armAnswer(409, armError("Conflict", "VM is being deleted")), "PUT")).toBeInstanceOf(
      BeingDeletedError,
    );
  });

  it("5xx, 408 and no answer at all are transient; other 4xx are fatal", () => {
    expect(classifyArmError(armAnswer(500, armError("InternalServerError", "oops")), "GET")).toBeInstanceOf(
      TransientError,
    );
    expect((classifyArmError(armAnswer(503, "", { "retry-after": "2" }), "GET") as TransientError).retryAfterMs).toBe(
      2_000,
    );
    expect(classifyArmError(armAnswer(408, ""), "GET")).toBeInstanceOf(TransientError);
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const e = classifyArmError(reset, "GET vmss");
    expect(e).toBeInstanceOf(TransientError);
    expect(e.message).toBe("GET vmss: no answer ECONNRESET socket hang up");
    const bad = classifyArmError(armAnswer(400, armError("InvalidParameter", "Property 'x' is invalid.")), "PUT");
    expect(bad).toBeInstanceOf(FatalError);
    expect(bad.message).toBe("PUT: 400 InvalidParameter Property 'x' is invalid.");
  });

  it("a body that is not JSON keeps the SDK's code and text", () => {
    expect(classifyArmError(armAnswer(502, "<html>bad gateway</html>"), "GET").message).toBe(
      "GET: 502 SdkCode the SDK's own text",
    );
  });

  it("an error already typed passes through unchanged", () => {
    const typed = new NotFoundError("already typed", 404);
    expect(classifyArmError(typed, "GET")).toBe(typed);
  });
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-12-02T10:00:00Z");
  it("reads seconds and HTTP dates, caps at six hours, and falls back on garbage", () => {
    expect(retryAfterMs("0", 1, now)).toBe(0);
    expect(retryAfterMs("2.5", 1, now)).toBe(2_500);
    expect(retryAfterMs("Wed, 02 Dec 2026 10:00:30 GMT", 1, now)).toBe(30_000);
    expect(retryAfterMs("Wed, 02 Dec 2026 09:00:00 GMT", 1, now)).toBe(0);
    expect(retryAfterMs("999999", 1, now)).toBe(6 * 3_600_000);
    expect(retryAfterMs("soon", 1234, now)).toBe(1234);
    expect(retryAfterMs(undefined, 1234, now)).toBe(1234);
  });
});
