import { createConnection } from "node:net";
import { TableClient } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { isStorageFailure } from "../../src/intake/intakeServices";

/**
 * src/intake/intakeServices.ts: the API answers storage's trouble 503 (retry) and lets anything else reach the host as
 * a 500, so isStorageFailure must know storage's errors as they are really thrown.
 */
const connectionRefused = () =>
  new Promise<unknown>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port: 9 });
    socket.on("error", resolve);
    socket.on("connect", () => resolve(new Error("port 9 answered")));
  });

describe("isStorageFailure", () => {
  it("knows the Table SDK's error (Azurite, a table that does not exist)", async () => {
    const table = TableClient.fromConnectionString(testStorageConnectionString(), uniqueName("nosuch"), {
      allowInsecureConnection: true,
    });
    const err = await table.getEntity("p", "r").catch((e: unknown) => e);
    expect((err as { statusCode?: number }).statusCode).toBe(404);
    expect(isStorageFailure(err)).toBe(true);
  });

  it("knows a refused connection, and any 5xx a client reports", async () => {
    const err = await connectionRefused();
    expect((err as { code?: string }).code).toBe("ECONNREFUSED");
    expect(isStorageFailure(err)).toBe(true);
    expect(isStorageFailure(Object.assign(new Error("busy"), { statusCode: 503 }))).toBe(true);
  });

  it("leaves a bug a bug: a TypeError, a 4xx that is not the SDK's, nothing at all", () => {
    expect(isStorageFailure(new TypeError("x is undefined"))).toBe(false);
    expect(isStorageFailure(Object.assign(new Error("no"), { statusCode: 400 }))).toBe(false);
    expect(isStorageFailure(undefined)).toBe(false);
  });
});
