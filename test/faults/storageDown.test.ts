import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVELOPMENT_STORAGE } from "../../src/config";
import { json, startIntakeApp, VALID_DECLARATION, type IntakeApp } from "../intake/support";

/**
 * Storage unreachable (a closed port): the API answers 503 with Retry-After and a plain reason. What the storage client
 * said (endpoints, account names, request ids) goes to the log, never into the answer.
 */
const DEAD = DEVELOPMENT_STORAGE.replace(/127\.0\.0\.1:1000[0-2]/g, "127.0.0.1:9");

let app: IntakeApp;
beforeAll(async () => {
  app = await startIntakeApp({ env: { AzureWebJobsStorage: DEAD } });
});
afterAll(async () => {
  await app?.stop();
});

describe("storage down", () => {
  it.each([
    ["PUT /api/memberships", () => fetch(`${app.url}/api/memberships`, json(VALID_DECLARATION))],
    ["GET /api/status", () => fetch(`${app.url}/api/status`)],
  ])("%s → 503 storage_unavailable, saying no more", async (_name, call) => {
    const res = await call();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.json()).toEqual({
      error: { code: "storage_unavailable", message: "storage is unavailable; try again" },
    });
    expect(app.appLogs.some((l) => String(l.error ?? "").length > 0 && String(l.event).endsWith("storage-error"))).toBe(
      true,
    );
  });
});
