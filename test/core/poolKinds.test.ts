import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { applyIntents, intentSatisfied, parseSelector, type NicConfiguration } from "../../src/core/networkProfile";
import { adminStatesAt, kindProblem, NETWORK_API_VERSION, poolKindOfId } from "../../src/core/poolKinds";

const NET = "/subscriptions/00000000-0000-0000-0000-00000000000a/resourceGroups/rg/providers/Microsoft.Network";
const BACKEND = `${NET}/loadBalancers/lb/backendAddressPools/be`;
const OTHER = `${NET}/loadBalancers/lb/backendAddressPools/other`;
const NAT = `${NET}/loadBalancers/lb/inboundNatPools/ssh`;
const GATEWAY = `${NET}/applicationGateways/agw/backendAddressPools/web`;

const nics = (): NicConfiguration[] => [
  {
    name: "nic-0",
    primary: true,
    ipConfigurations: [
      {
        name: "ipConfig0",
        primary: true,
        loadBalancerBackendAddressPools: [{ id: BACKEND }],
        loadBalancerInboundNatPools: [{ id: `${NET}/loadBalancers/lb/inboundNatPools/theirs` }],
      },
    ],
  },
];
const ipc = (n: NicConfiguration[] | undefined) => n?.[0]?.ipConfigurations?.[0];
const intent = (pool: string, state: "present" | "absent", movedTo?: string) => ({
  backendPoolId: pool,
  selector: parseSelector(undefined),
  state,
  ...(movedTo ? { movedTo } : {}),
});

describe("pool kinds in the edit (issue 43)", () => {
  it("knows each kind by its ID", () => {
    expect([BACKEND, NAT, GATEWAY].map(poolKindOfId)).toEqual([
      "loadBalancerBackendPool",
      "inboundNatPool",
      "applicationGatewayBackendPool",
    ]);
  });

  it("puts an inbound NAT pool in loadBalancerInboundNatPools, after the NAT pools already there", () => {
    const r = applyIntents(nics(), [intent(NAT, "present")]);
    expect(ipc(r.nics)?.loadBalancerInboundNatPools).toEqual([
      { id: `${NET}/loadBalancers/lb/inboundNatPools/theirs` },
      { id: NAT },
    ]);
    expect(ipc(r.nics)?.loadBalancerBackendAddressPools).toEqual([{ id: BACKEND }]);
    expect(intentSatisfied(r.nics!, intent(NAT, "present"))).toBe(true);
    // A backend pool of the same name is not the NAT pool.
    expect(intentSatisfied(nics(), intent(NAT, "present"))).toBe(false);
  });

  it("puts an application gateway pool in applicationGatewayBackendAddressPools and removes only it", () => {
    const added = applyIntents(nics(), [intent(GATEWAY, "present")]);
    expect(ipc(added.nics)?.applicationGatewayBackendAddressPools).toEqual([{ id: GATEWAY }]);
    const removed = applyIntents(added.nics!, [intent(GATEWAY, "absent")]);
    expect(ipc(removed.nics)?.applicationGatewayBackendAddressPools).toEqual([]);
    expect(ipc(removed.nics)?.loadBalancerInboundNatPools).toHaveLength(1);
  });

  it("a move adds the new pool and removes the old in one edit", () => {
    const r = applyIntents(nics(), [intent(BACKEND, "absent", OTHER), intent(OTHER, "present")]);
    expect(ipc(r.nics)?.loadBalancerBackendAddressPools).toEqual([{ id: OTHER }]);
    expect(r.outcomes).toEqual([{ ok: true }, { ok: true }]);
  });

  it("a move whose new pool cannot be placed keeps the old one", () => {
    const selector = parseSelector("nope");
    const r = applyIntents(nics(), [
      intent(BACKEND, "absent", OTHER),
      { backendPoolId: OTHER, selector, state: "present" as const },
    ]);
    expect(r.nics).toBeUndefined();
    expect(r.outcomes[0]).toMatchObject({ ok: false, reason: expect.stringContaining("keeps this pool until") });
  });
});

describe("which declarations the pool kinds take (issue 43)", () => {
  const vm = { kind: "vm" as const };
  const scaleSet = { kind: "scaleSet" as const };

  it("a NAT pool only on a scale set", () => {
    expect(kindProblem({ target: vm, poolKind: "inboundNatPool", state: "present" })).toMatchObject({
      field: "backendPoolId",
    });
    expect(kindProblem({ target: scaleSet, poolKind: "inboundNatPool", state: "present" })).toBeUndefined();
  });

  it("admin state only on a load balancer backend pool, present, at a state the api-version has", () => {
    const base = { target: scaleSet, state: "present" as const };
    expect(kindProblem({ ...base, poolKind: "applicationGatewayBackendPool", adminState: "Down" })).toMatchObject({
      field: "adminState",
    });
    expect(kindProblem({ ...base, poolKind: "inboundNatPool", adminState: "Up" })).toMatchObject({
      field: "adminState",
    });
    expect(kindProblem({ ...base, poolKind: "loadBalancerBackendPool", adminState: "Down" })).toBeUndefined();
    expect(kindProblem({ ...base, poolKind: "loadBalancerBackendPool", adminState: "Drain" })).toMatchObject({
      field: "adminState",
      reason: expect.stringContaining("Drain was in 2022-01-01"),
    });
    expect(
      kindProblem({ ...base, state: "absent", poolKind: "loadBalancerBackendPool", adminState: "Down" }),
    ).toMatchObject({ field: "adminState" });
    expect(kindProblem({ ...base, poolKind: "loadBalancerBackendPool", adminInstances: ["3"] })).toMatchObject({
      field: "instances",
    });
    expect(
      kindProblem({
        target: vm,
        state: "present",
        poolKind: "loadBalancerBackendPool",
        adminState: "Up",
        adminInstances: ["3"],
      }),
    ).toMatchObject({ field: "instances" });
  });

  it("admin states by api-version, as the specification's table says", () => {
    expect(adminStatesAt("2021-08-01")).toEqual([]);
    expect(adminStatesAt("2022-01-01")).toContain("Drain");
    expect(adminStatesAt("2022-09-01")).toContain("Drain");
    expect(adminStatesAt("2022-11-01")).toEqual(["None", "Up", "Down"]);
  });

  it("speaks the Network api-version of the SDK it ships", () => {
    const sdk = readFileSync(
      require.resolve("@azure/arm-network").replace(/index\.js$/, "api/networkInterfaces/operations.js"),
      "utf8",
    );
    expect(sdk).toContain(`apiVersion: "${NETWORK_API_VERSION}"`);
  });
});
