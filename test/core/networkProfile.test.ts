import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyIntents,
  intentSatisfied,
  parseSelector,
  type NicConfiguration,
  type PoolIntent,
} from "../../src/core/networkProfile";

const POOL_A =
  "/subscriptions/00000000-0000-0000-0000-00000000000a/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/a";
const POOL_B =
  "/subscriptions/00000000-0000-0000-0000-00000000000a/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/b";

function nics(): NicConfiguration[] {
  return [
    {
      name: "nic-0",
      primary: true,
      enableAcceleratedNetworking: true,
      ipConfigurations: [
        {
          name: "ipConfig0",
          primary: true,
          subnet: { id: "/subnet" },
          loadBalancerBackendAddressPools: [{ id: POOL_B }],
        },
        { name: "ipConfig1", privateIPAddressVersion: "IPv6" },
      ],
    },
    { name: "nic-1", primary: false, ipConfigurations: [{ name: "ipConfig0", primary: true }] },
  ];
}

const present = (pool: string, ip?: string): PoolIntent => ({
  backendPoolId: pool,
  selector: parseSelector(ip),
  state: "present",
});
const absent = (pool: string, ip?: string): PoolIntent => ({
  backendPoolId: pool,
  selector: parseSelector(ip),
  state: "absent",
});

describe("applyIntents", () => {
  it("adds the pool to the primary ip configuration of the primary NIC, after the ones there", () => {
    const r = applyIntents(nics(), [present(POOL_A)]);
    expect(r.nics?.[0]?.ipConfigurations?.[0]?.loadBalancerBackendAddressPools).toEqual([
      { id: POOL_B },
      { id: POOL_A },
    ]);
    expect(r.outcomes).toEqual([{ ok: true }]);
  });

  it("answers no change when the pool is already there in another letter case", () => {
    const r = applyIntents(nics(), [present(POOL_B.toUpperCase().replace("/SUBSCRIPTIONS", "/subscriptions"))]);
    expect(r.nics).toBeUndefined();
  });

  it("removes only the declared pool and keeps every other field", () => {
    const before = nics();
    const r = applyIntents(before, [absent(POOL_B)]);
    const after = r.nics!;
    expect(after[0]?.ipConfigurations?.[0]).toEqual({
      name: "ipConfig0",
      primary: true,
      subnet: { id: "/subnet" },
      loadBalancerBackendAddressPools: [],
    });
    expect(after[0]?.enableAcceleratedNetworking).toBe(true);
    expect(after[1]).toBe(before[1]);
    expect(before[0]?.ipConfigurations?.[0]?.loadBalancerBackendAddressPools).toEqual([{ id: POOL_B }]); // input untouched
  });

  it("finds a named ip configuration in the primary NIC first, and nic/ipconfig picks the NIC", () => {
    expect(
      applyIntents(nics(), [present(POOL_A, "ipConfig1")]).nics?.[0]?.ipConfigurations?.[1]
        ?.loadBalancerBackendAddressPools,
    ).toEqual([{ id: POOL_A }]);
    const onSecond = applyIntents(nics(), [present(POOL_A, "nic-1/ipConfig0")]).nics!;
    expect(onSecond[1]?.ipConfigurations?.[0]?.loadBalancerBackendAddressPools).toEqual([{ id: POOL_A }]);
    expect(onSecond[0]).toEqual(nics()[0]);
  });

  it("refuses an unknown ip configuration with the reason and changes nothing for it", () => {
    const r = applyIntents(nics(), [present(POOL_A, "nope"), present(POOL_A, "ghost/ipConfig0")]);
    expect(r.nics).toBeUndefined();
    expect(r.outcomes).toEqual([
      { ok: false, reason: 'ip configuration "nope" does not exist' },
      { ok: false, reason: 'network interface configuration "ghost" does not exist' },
    ]);
  });

  it("treats a lone NIC and ip configuration as primary, as CRP does", () => {
    const lone: NicConfiguration[] = [{ name: "n", ipConfigurations: [{ name: "i" }] }];
    expect(
      applyIntents(lone, [present(POOL_A)]).nics?.[0]?.ipConfigurations?.[0]?.loadBalancerBackendAddressPools,
    ).toEqual([{ id: POOL_A }]);
    const ambiguous: NicConfiguration[] = [{ name: "n1" }, { name: "n2" }];
    expect(applyIntents(ambiguous, [present(POOL_A)]).outcomes[0]).toEqual({
      ok: false,
      reason: "the scale set has no primary network interface configuration",
    });
  });

  const poolIds = fc.constantFrom(
    POOL_A,
    POOL_B,
    POOL_A.toUpperCase().replace("/SUBSCRIPTIONS", "/subscriptions"),
    `${POOL_A}x`,
  );
  const intents = fc.array(
    fc.record({
      backendPoolId: poolIds,
      selector: fc.constantFrom(parseSelector(undefined), parseSelector("ipConfig1"), parseSelector("nic-1/ipConfig0")),
      state: fc.constantFrom("present" as const, "absent" as const),
    }),
    { maxLength: 6 },
  );
  // Distinct (pool, ip configuration) keys, as the memberships table guarantees.
  const distinct = intents.map((xs) =>
    xs.filter(
      (x, i) =>
        xs.findIndex(
          (y) =>
            y.backendPoolId.toLowerCase() === x.backendPoolId.toLowerCase() &&
            JSON.stringify(y.selector) === JSON.stringify(x.selector),
        ) === i,
    ),
  );

  it("property: applying the result again changes nothing (idempotent)", () => {
    fc.assert(
      fc.property(distinct, (xs) => {
        const once = applyIntents(nics(), xs).nics ?? nics();
        expect(applyIntents(once, xs).nics).toBeUndefined();
      }),
    );
  });

  it("property: afterwards every intent is satisfied (or refused for spanning two IP versions), and only pool lists differ from the input", () => {
    const strip = (ns: NicConfiguration[]) =>
      JSON.parse(JSON.stringify(ns, (k, v) => (k === "loadBalancerBackendAddressPools" ? undefined : v)));
    fc.assert(
      fc.property(distinct, (xs) => {
        const r = applyIntents(nics(), xs);
        const after = r.nics ?? nics();
        // ipConfig1 is IPv6, the others IPv4: one pool asked on both is refused on the second, with the reason.
        xs.forEach((x, i) => {
          const o = r.outcomes[i];
          if (o?.ok) expect(intentSatisfied(after, x)).toBe(true);
          else expect(o?.reason).toMatch(/one pool never holds ip configurations of two IP versions/);
        });
        expect(strip(after)).toEqual(strip(nics()));
        // Pools nobody declared about survive, in their order.
        const undeclared = (ns: NicConfiguration[]) =>
          ns
            .flatMap((n) =>
              (n.ipConfigurations ?? []).flatMap((c) => (c.loadBalancerBackendAddressPools ?? []).map((p) => p.id)),
            )
            .filter((id) => !xs.some((x) => x.backendPoolId.toLowerCase() === id?.toLowerCase()));
        expect(undeclared(after)).toEqual(undeclared(nics()));
      }),
    );
  });
});
