import { describe, expect, it } from "vitest";
import { callerOf } from "../../src/core/eventCaller";

describe("event caller", () => {
  it("names a user by the first name claim it finds, with object id, operation and correlation", () => {
    const caller = callerOf(
      {
        claims: {
          "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name": "alice@example.com",
          upn: "not-this@example.com",
          "http://schemas.microsoft.com/identity/claims/objectidentifier": "oid-1",
        },
        authorization: { action: "Microsoft.Compute/virtualMachineScaleSets/write" },
        correlationId: "corr-1",
      },
      "event-1",
      "2026-12-02T10:00:00Z",
    );
    expect(caller).toEqual({
      name: "alice@example.com",
      id: "oid-1",
      appId: undefined,
      operation: "Microsoft.Compute/virtualMachineScaleSets/write",
      correlationId: "corr-1",
      eventId: "event-1",
      at: "2026-12-02T10:00:00Z",
    });
  });

  it("falls back to the short claims and to operationName when the long ones are absent", () => {
    const caller = callerOf(
      { claims: { oid: "oid-2", azp: "app-2" }, operationName: "Microsoft.Network/networkInterfaces/write" },
      "e",
      undefined,
    );
    expect(caller.id).toBe("oid-2");
    expect(caller.appId).toBe("app-2");
    expect(caller.operation).toBe("Microsoft.Network/networkInterfaces/write");
    expect(caller.name).toBeUndefined();
  });

  it("keeps an event's untrusted fields to text of at most 256 characters, dropping anything else", () => {
    const caller = callerOf(
      { claims: ["not", "an", "object"], authorization: { action: 42 }, correlationId: "x".repeat(1_000) },
      "e",
      undefined,
    );
    expect(caller.name).toBeUndefined();
    expect(caller.operation).toBeUndefined();
    expect(caller.correlationId).toHaveLength(256);
  });
});
