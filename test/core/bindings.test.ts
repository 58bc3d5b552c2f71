import { describe, expect, it } from "vitest";
import { checkBinding, parseBindings } from "../../src/core/bindings";
import { loadConfig } from "../../src/config";

const SUB = "11111111-2222-3333-4444-555555555555";
const vmss = (rg: string, name: string, sub = SUB) =>
  `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`;
const pool = (rg: string, lb: string, p: string, sub = SUB) =>
  `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Network/loadBalancers/${lb}/backendAddressPools/${p}`;
function parse(text: string) {
  const r = parseBindings(text);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

describe("POOLSYNC_BINDINGS", () => {
  const rules = parseBindings(
    `/subscriptions/*/resourceGroups/nodes/providers/Microsoft.Compute/virtualMachineScaleSets/* => /subscriptions/*/resourceGroups/nodes/providers/Microsoft.Network/loadBalancers/internal;
     both: /subscriptions/${SUB}/resourceGroups/edge => /subscriptions/${SUB}/resourceGroups/edge/providers/Microsoft.Network/loadBalancers/public/backendAddressPools/web`,
  );
  if (!rules.ok) throw new Error(rules.reason);

  it("allows a pairing one rule covers on both sides (prefixes by segment, * one segment, ASCII case-insensitive)", () => {
    expect(checkBinding(rules.value, vmss("nodes", "pool-a"), pool("nodes", "internal", "any"))).toMatchObject({
      allowed: true,
      rule: { index: 1 },
    });
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
    expect(
      checkBinding(
        rules.value,
        vmss("nodes", "x"),
        pool("nodes", "internal", "p").replace("Microsoft.Network", "Microsoft.Networ\u212a"),
      ).allowed,
    ).toBe(false);
  });

  it("no rules: no pairing; `*` is every pairing inside the scopes, on purpose", () => {
    expect(checkBinding([], vmss("a", "b"), pool("c", "d", "e")).allowed).toBe(false);
    expect(checkBinding(parse("*"), vmss("a", "b"), pool("c", "d", "e")).allowed).toBe(true);
  });

  it("{sub} ties the pool's subscription to the target's: a dev scale set cannot join a prod load balancer", () => {
    const DEV = "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d";
    const rules = parse(
      "/subscriptions/{sub}/resourceGroups/*/providers/Microsoft.Compute/virtualMachineScaleSets/* => /subscriptions/{sub}/resourceGroups/*",
    );
    expect(checkBinding(rules, vmss("nodes", "a", DEV), pool("nodes", "lb", "p", DEV)).allowed).toBe(true);
    expect(checkBinding(rules, vmss("nodes", "a", DEV), pool("nodes", "lb", "p", SUB)).allowed).toBe(false);
    expect(() => parse("both: /subscriptions/* => /subscriptions/{sub}")).toThrow(
      "pool side {sub} is not named on the target side",
    );
  });

  it("a rule says which targets it covers: one for scale sets does not admit the group's VMs", () => {
    const rg = `/subscriptions/${SUB}/resourceGroups/nodes`;
    const vm = `${rg}/providers/Microsoft.Compute/virtualMachines/db-0`;
    const scaleSetsOnly = parse(`scaleSets: ${rg} => ${rg}`);
    expect(checkBinding(scaleSetsOnly, vmss("nodes", "a"), pool("nodes", "lb", "p")).allowed).toBe(true);
    expect(checkBinding(scaleSetsOnly, vm, pool("nodes", "lb", "p")).allowed).toBe(false);
    expect(checkBinding(parse(`both: ${rg} => ${rg}`), vm, pool("nodes", "lb", "p")).allowed).toBe(true);
    expect(
      checkBinding(parse(`${rg}/providers/Microsoft.Compute/virtualMachines/* => ${rg}`), vm, pool("nodes", "lb", "p"))
        .allowed,
    ).toBe(true);
  });

  it("a malformed rule fails the settings at start, naming it", () => {
    const env = { POOLSYNC_SCOPES: `/subscriptions/${SUB}`, AzureWebJobsStorage: "UseDevelopmentStorage=true" };
    expect(() => loadConfig({ ...env, POOLSYNC_BINDINGS: "/subscriptions/x" })).toThrow(
      'POOLSYNC_BINDINGS="/subscriptions/x" rule 1 "/subscriptions/x" must be "<target prefix> => <pool prefix>"',
    );
    expect(() => loadConfig({ ...env, POOLSYNC_BINDINGS: "/subscriptions/a* => /subscriptions/b" })).toThrow(
      '"*" stands for a whole segment',
    );
    expect(() => loadConfig({ ...env, POOLSYNC_BINDINGS: "nodes => /subscriptions/b" })).toThrow(
      "must be an ARM ID prefix starting with /subscriptions/",
    );
    // Required, and a rule that stops at a resource group must say what it covers: old rules keep their meaning or fail
    // here.
    expect(() => loadConfig(env)).toThrow("POOLSYNC_BINDINGS is required");
    expect(() =>
      loadConfig({ ...env, POOLSYNC_BINDINGS: `/subscriptions/${SUB}/resourceGroups/x => /subscriptions/${SUB}` }),
    ).toThrow('say which targets it is for with "scaleSets:", "vms:" or "both:"');
  });
});
