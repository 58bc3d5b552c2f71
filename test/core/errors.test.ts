import { describe, expect, it } from "vitest";
import {
  BeingDeletedError,
  ConflictError,
  describeError,
  FatalError,
  NotFoundError,
  PreconditionFailedError,
  RefusedError,
  ThrottledError,
  TransientError,
} from "../../src/core/errors";

describe("errors", () => {
  it("tells the outcomes worth trying again from the terminal ones", () => {
    const retriable = [
      new PreconditionFailedError("412", 412),
      new ThrottledError("429", 30_000),
      new ConflictError("409", 5_000),
      new TransientError("503", 10_000, 503),
    ];
    const terminal = [
      new NotFoundError("404", 404),
      new BeingDeletedError("deleting"),
      new FatalError("400", 400),
      new RefusedError("scope"),
    ];
    expect(retriable.map((e) => e.retriable)).toEqual([true, true, true, true]);
    expect(terminal.map((e) => e.retriable)).toEqual([false, false, false, false]);
  });

  it("names each error by its class, so logs and status say which outcome it was", () => {
    const e = new ThrottledError("too many", 12_000, 429, "OperationNotAllowed", false);
    expect(e.name).toBe("ThrottledError");
    expect(e).toMatchObject({ status: 429, code: "OperationNotAllowed", retryAfterMs: 12_000, retryAfterGiven: false });
    expect(new ConflictError("busy", 3_000).status).toBe(409);
    expect(describeError(new NotFoundError("scale set gone", 404))).toBe("NotFoundError: scale set gone");
  });

  it("describes whatever was thrown, errors or not", () => {
    expect(describeError(new TypeError("x is undefined"))).toBe("TypeError: x is undefined");
    expect(describeError("plain text")).toBe("plain text");
    expect(describeError(undefined)).toBe("undefined");
  });
});
