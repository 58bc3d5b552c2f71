import { HttpRequest } from "@azure/functions";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { readTargetQuery } from "../../src/intake/targetQuery";
import { VM, VMSS } from "./viewFixtures";

/**
 * src/intake/targetQuery.ts: what every read-only GET …?targetId= checks first, in one order with one set of answers:
 * the caller, the method, repeated parameters, then the target and its scope.
 */
const config = (auth: "key" | "entra") =>
  loadConfig({
    AzureWebJobsStorage: "UseDevelopmentStorage=true",
    POOLSYNC_SCOPES: "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/web",
    POOLSYNC_BINDINGS: "*",
    POOLSYNC_AUTH: auth,
    WEBSITE_AUTH_ENABLED: "True",
  });
const KEY = { config: config("key") };
const get = (query: string, method = "GET") => new HttpRequest({ method, url: `http://h/api/plan?${query}` });
const answer = (r: ReturnType<typeof readTargetQuery>) =>
  r.ok ? "ok" : `${r.response.status} ${(r.response.jsonBody as { error: { code: string } }).error.code}`;

describe("readTargetQuery", () => {
  it("gives the parsed target and the route's own flags", () => {
    const r = readTargetQuery(get(`targetId=${encodeURIComponent(VM)}&limit=5`), KEY, ["GET"], ["limit"]);
    expect(r.ok && { id: r.ref.id, kind: r.ref.kind, flags: r.flags }).toEqual({
      id: VM,
      kind: "vm",
      flags: { targetId: VM, limit: "5" },
    });
  });

  it("refuses a missing, malformed or out-of-scope target, naming targetId", () => {
    expect(answer(readTargetQuery(get(""), KEY, ["GET"]))).toBe("400 missing_query");
    expect(answer(readTargetQuery(get("targetId=/subscriptions/x"), KEY, ["GET"]))).toBe("400 invalid_field");
    const elsewhere = VMSS.replace("/resourceGroups/web/", "/resourceGroups/other/");
    expect(answer(readTargetQuery(get(`targetId=${encodeURIComponent(elsewhere)}`), KEY, ["GET"]))).toBe(
      "403 out_of_scope",
    );
  });

  it("checks the caller before anything else, then the method, then repeated parameters", () => {
    const entra = { config: config("entra") };
    expect(answer(readTargetQuery(get("targetId=a&targetId=b", "POST"), entra, ["GET"]))).toBe("401 unauthenticated");
    expect(answer(readTargetQuery(get("targetId=a&targetId=b", "POST"), KEY, ["GET"]))).toBe("405 method_not_allowed");
    expect(answer(readTargetQuery(get(`targetId=${encodeURIComponent(VMSS)}&TARGETID=x`), KEY, ["GET"]))).toBe(
      "400 repeated_parameter",
    );
  });
});
