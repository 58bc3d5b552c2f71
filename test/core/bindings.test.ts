import { describe, expect, it } from "vitest";
import { checkBinding, parseBindings } from "../../src/core/bindings";
import { loadConfig } from "../../src/config";

const SUB = "11111111-2222-3333-4444-555555555555";
const vmss = (rg: string, name: string) => `/subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`;
const pool = (rg: string, lb: string, p: string) =>
  `/subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.Network/loadBalancers/${lb}/backendAddressPools/${p}`;

describe("POOLSYNC_BINDINGS", () => {
  const rules = parseBindings(
    `/subscriptions/*/resourceGroups/nodes/providers/Microsoft.Compute/virtualMachineScaleSets/* => /subscriptions/*/resourceGroups/nodes/providers/Microsoft.Network/loadBalancers/internal;
     /subscriptions/${SUB}/resourceGroups/edge => /subscriptions/${SUB}/resourceGroups/edge/providers/Microsoft.Network/loadBalancers/public/backendAddressPools/web`,
  );
  if (!rules.ok) throw new Error(rules.reason);

  it("allows a pairing one rule covers on both sides (prefixes by segment, * one segment, ASCII case-insensitive)", () => {
    expect(checkBinding(rules.value, vmss("nodes", "pool-a"), pool("nodes", "internal", "any"))).toMatchObject({ allowed: true, rule: { index: 1 } });
    expect(checkBinding(rules.value, vmss("NODES", "pool-a"), pool("Nodes", "INTERNAL", "any")).allowed).toBe(true);
    expect(checkBinding(rules.value, vmss("edge", "web-0"), pool("edge", "public", "web")).allowed).toBe(true);
  });

  it("refuses a pool of another load balancer, naming the rules that cover the target", () => {
    expect(checkBinding(rules.value, vmss("nodes", "pool-a"), pool("nodes", "public", "web"))).toEqual({
      allowed: false,
      reason: `${pool("nodes", "public", "web")} is not a pool POOLSYNC_BINDINGS lets ${vmss("nodes", "pool-a")} join: rule 1 (${rules.value[0]!.text}) allows other pools only`,
    });
    // A prefix is whole segments: "internal" does not cover "internal-2".
    expect(checkBinding(rules.value, vmss("nodes", "pool-a"), pool("nodes", "internal-2", "p")).allowed).toBe(false);
  });

  it("refuses a target no rule covers, and a Kelvin sign does not fold into k", () => {
    expect(checkBinding(rules.value, vmss("other", "x"), pool("other", "internal", "p"))).toEqual({
      allowed: false,
      reason: `no POOLSYNC_BINDINGS rule covers ${vmss("other", "x")}`,
    });
    expect(checkBinding(rules.value, vmss("nodes", "x"), pool("nodes", "internal", "p").replace("Microsoft.Network", "Microsoft.Networ\u212a")).allowed).toBe(
      false,
    );
  });

  it("no rules: every pairing (the scopes still bound everything)", () => {
    expect(checkBinding([], vmss("a", "b"), pool("c", "d", "e"))).toEqual({ allowed: true });
  });

  it("a malformed rule fails the settings at start, naming it", () => {
    const env = { POOLSYNC_SCOPES: `/subscriptions/${SUB}`, AzureWebJobsStorage: "UseDevelopmentStorage=true" };
    expect(() => loadConfig({ ...env, POOLSYNC_BINDINGS: "/subscriptions/x" })).toThrow(
      'POOLSYNC_BINDINGS="/subscriptions/x" rule 1 "/subscriptions/x" must be "<target prefix> => <pool prefix>"',
    );
    expect(() => loadConfig({ ...env, POOLSYNC_BINDINGS: "/subscriptions/a* => /subscriptions/b" })).toThrow('"*" stands for a whole segment');
    expect(() => loadConfig({ ...env, POOLSYNC_BINDINGS: "nodes => /subscriptions/b" })).toThrow("must be an ARM ID prefix starting with /subscriptions/");
    expect(loadConfig(env).bindings).toEqual([]);
  });
});
