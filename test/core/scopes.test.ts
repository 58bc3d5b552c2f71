import { describe, expect, it } from "vitest";
import { inScopes, parseScope, type Scope } from "../../src/core/scopes";

const SUB = "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d"; // made up
const OTHER = "9a8b7c6d-1111-2222-3333-444455556666";

const scope = (s: string): Scope => {
  const r = parseScope(s);
  if (!r.ok) throw new Error(`test bug: ${s} ${r.reason}`);
  return r.value;
};

describe("scopes", () => {
  it("parses a subscription or a resource group scope, in any letter case, trailing slash allowed", () => {
    expect(parseScope(` /subscriptions/${SUB}/ `)).toEqual({
      ok: true,
      value: { id: `/subscriptions/${SUB}`, subscriptionId: SUB },
    });
    expect(parseScope(`/SUBSCRIPTIONS/${SUB}/resourcegroups/Rg-1`)).toEqual({
      ok: true,
      value: { id: `/subscriptions/${SUB}/resourceGroups/Rg-1`, subscriptionId: SUB, resourceGroup: "Rg-1" },
    });
  });

  it("refuses what is not a scope, saying why", () => {
    expect(parseScope("/subscriptions/not-a-guid")).toEqual({
      ok: false,
      reason: 'subscription "not-a-guid" is not a GUID',
    });
    expect(parseScope(`/subscriptions/${SUB}/resourceGroups/grüne`)).toEqual({
      ok: false,
      reason: 'resource group "grüne" is not a valid name',
    });
    expect(parseScope(`/subscriptions/${SUB}/resourceGroups/${"g".repeat(91)}`).ok).toBe(false);
    expect(parseScope(`/subscriptions/${SUB}/resourceGroups/${"g".repeat(90)}`).ok).toBe(true);
    const r = parseScope(`/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute`);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toContain("must be /subscriptions/{id}");
  });

  it("lets in a resource of a scoped subscription or resource group, case-insensitively, and nothing else", () => {
    const scopes = [scope(`/subscriptions/${SUB}/resourceGroups/web`), scope(`/subscriptions/${OTHER}`)];
    expect(inScopes(scopes, SUB.toUpperCase(), "WEB")).toBe(true);
    expect(inScopes(scopes, SUB, "db")).toBe(false);
    expect(inScopes(scopes, OTHER, "anything")).toBe(true);
    expect(inScopes([], SUB, "web")).toBe(false);
  });
});
