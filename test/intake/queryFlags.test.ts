import { HttpRequest } from "@azure/functions";
import { describe, expect, it } from "vitest";
import { readQueryFlags } from "../../src/intake/queryFlags";

/**
 * src/intake/queryFlags.ts: the host joins a repeated parameter's values with "," and keys the query in any casing; a
 * route's parameters are read so that neither can turn a dry run into a real declaration.
 */
const query = (url: string) => new HttpRequest({ method: "GET", url }).query;

describe("readQueryFlags", () => {
  it("reads each named parameter once, null when absent", () => {
    const r = readQueryFlags(query("http://h/api/x?dryRun=true"), ["dryRun", "targetId"]);
    expect(r).toEqual({ ok: true, value: { dryRun: "true", targetId: null } });
  });

  it("refuses a parameter given twice, naming it, whether as two entries or as the host's joined value", () => {
    for (const q of [query("http://h/api/x?dryRun=false&dryRun=true"), new URLSearchParams({ dryRun: "false,true" })]) {
      const r = readQueryFlags(q, ["dryRun"]);
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.problem).toMatchObject({ status: 400, code: "repeated_parameter", field: "dryRun" });
      expect(r.problem.message).toMatch(/^dryRun: given 2 times/);
    }
  });

  it("matches a parameter in any casing, so ?DRYRUN=true is not silently a real declaration", () => {
    expect(readQueryFlags(query("http://h/api/x?DRYRUN=true"), ["dryRun"])).toEqual({
      ok: true,
      value: { dryRun: "true" },
    });
    const mixed = readQueryFlags(query("http://h/api/x?dryrun=false&DryRun=true"), ["dryRun"]);
    expect(mixed.ok).toBe(false);
  });

  it("reads a query that offers only get (no entries) by its exact name", () => {
    const only = { get: (n: string) => (n === "targetId" ? "/subscriptions/x" : null) };
    expect(readQueryFlags(only, ["targetId"])).toEqual({ ok: true, value: { targetId: "/subscriptions/x" } });
  });
});
