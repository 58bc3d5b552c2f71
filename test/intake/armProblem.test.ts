import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, RefusedError, ThrottledError, TransientError } from "../../src/core/errors";
import { armProblem } from "../../src/intake/armProblem";

/** src/intake/armProblem.ts: a plan's failed ARM read is told as ARM's trouble, never as the host's bare 500. */
describe("armProblem", () => {
  it("answers ARM's throttling 503 arm_throttled, with ARM's own Retry-After", () => {
    const p = armProblem(new ThrottledError("too many", 2_500, 429, "TooManyRequests"));
    expect(p).toMatchObject({ status: 503, code: "arm_throttled", headers: { "retry-after": "3" } });
    expect(p?.arm).toEqual({ status: 429, code: "TooManyRequests" });
    expect(p?.message).toContain("nothing was written; try again after 3 s");
  });

  it("names no wait when ARM named none, and tells a dropped connection from an answer", () => {
    const dropped = armProblem(new TransientError("socket hang up", 5_000, undefined, undefined, false));
    expect(dropped).toMatchObject({ status: 503, code: "arm_unavailable" });
    expect(dropped?.headers).toBeUndefined();
    expect(dropped?.message).toMatch(/^ARM did not answer/);
    const busy = armProblem(new ConflictError("another operation", 4_000));
    expect(busy).toMatchObject({ status: 503, code: "arm_unavailable" });
    expect(busy?.headers).toBeUndefined();
    expect(busy?.message).toMatch(/^ARM answered 409/);
  });

  it("answers any other ARM answer 502, and says what a reconcile would make of a missing target", () => {
    const gone = armProblem(new NotFoundError("no such scale set", 404, "ResourceNotFound"));
    expect(gone).toMatchObject({ status: 502, code: "arm_error", arm: { status: 404, code: "ResourceNotFound" } });
    expect(gone?.message).toContain("target-deleted");
  });

  it("leaves to others what is not ARM's trouble: a refusal before any call, or any other error", () => {
    expect(armProblem(new RefusedError("outside POOLSYNC_SCOPES"))).toBeUndefined();
    expect(armProblem(new Error("bug"))).toBeUndefined();
    expect(armProblem(undefined)).toBeUndefined();
  });
});
