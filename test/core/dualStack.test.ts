// Dual stack: choosing the ip configuration by IP version, and never one pool on two IP versions.
import { describe, expect, it } from "vitest";
import {
  applyIntents,
  intentSatisfied,
  parseSelector,
  selectorText,
  versionSelectorText,
  type NicConfiguration,
  type PoolIntent,
} from "../../src/core/networkProfile";

const LB =
  "/subscriptions/00000000-0000-0000-0000-00000000000a/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools";
const V4 = `${LB}/v4`;
const V6 = `${LB}/v6`;

function dual(): NicConfiguration[] {
  return [
    {
      name: "nic-0",
      primary: true,
      ipConfigurations: [
        { name: "ipConfig0", primary: true, privateIPAddressVersion: "IPv4" },
        { name: "ipConfig0-v6", privateIPAddressVersion: "IPv6" },
      ],
    },
    {
      name: "nic-1",
      ipConfigurations: [
        { name: "a", privateIPAddressVersion: "IPv6" },
        { name: "b", privateIPAddressVersion: "IPv6" },
      ],
    },
  ];
}

const intent = (pool: string, selector: string, state: "present" | "absent" = "present"): PoolIntent => ({
  backendPoolId: pool,
  selector: parseSelector(selector),
  state,
});

describe("version selectors", () => {
  it("round-trip through their stored form, which no ip configuration name can take", () => {
    expect(versionSelectorText("IPv6")).toBe("@IPv6");
    expect(parseSelector("@IPv6")).toEqual({ kind: "version", version: "IPv6" });
    expect(parseSelector("nic-1/@IPv4")).toEqual({ kind: "version", nic: "nic-1", version: "IPv4" });
    expect(selectorText(parseSelector("nic-1/@IPv6"))).toBe("nic-1/@IPv6");
  });

  it("pick the primary NIC's ip configuration of that version; an absent version means IPv4", () => {
    const r = applyIntents(dual(), [intent(V6, "@IPv6"), intent(V4, "@IPv4")]);
    expect(r.outcomes).toEqual([{ ok: true }, { ok: true }]);
    expect(r.nics?.[0]?.ipConfigurations?.map((c) => c.loadBalancerBackendAddressPools)).toEqual([
      [{ id: V4 }],
      [{ id: V6 }],
    ]);
    const unflagged: NicConfiguration[] = [
      { name: "n", ipConfigurations: [{ name: "x" }, { name: "y", privateIPAddressVersion: "IPv6" }] },
    ];
    expect(
      applyIntents(unflagged, [intent(V4, "@IPv4")]).nics?.[0]?.ipConfigurations?.[0]?.loadBalancerBackendAddressPools,
    ).toEqual([{ id: V4 }]);
  });

  it("refuse with a reason when there is none, or more than one", () => {
    const none: NicConfiguration[] = [
      { name: "only-v4", primary: true, ipConfigurations: [{ name: "ipConfig0", primary: true }] },
    ];
    expect(applyIntents(none, [intent(V6, "@IPv6")])).toEqual({
      nics: undefined,
      outcomes: [{ ok: false, reason: 'network interface "only-v4" has no IPv6 ip configuration' }],
    });
    expect(applyIntents(dual(), [intent(V6, "nic-1/@IPv6")]).outcomes).toEqual([
      { ok: false, reason: 'network interface "nic-1" has 2 IPv6 ip configurations (a, b): name one' },
    ]);
    expect(intentSatisfied(none, intent(V6, "@IPv6"))).toBe('network interface "only-v4" has no IPv6 ip configuration');
  });

  it("never put a pool on an ip configuration of another version than one that already holds it", () => {
    const start = applyIntents(dual(), [intent(V4, "@IPv4")]).nics as NicConfiguration[];
    const r = applyIntents(start, [intent(V4, "ipConfig0-v6")]);
    expect(r.nics).toBeUndefined();
    expect(r.outcomes[0]).toEqual({
      ok: false,
      reason:
        'the pool is already on IPv4 ip configuration "nic-0/ipConfig0": one pool never holds ip configurations of two IP versions',
    });
    // Removing it from one and adding it to the other in one reconcile is fine: the removal comes first.
    const moved = applyIntents(start, [intent(V4, "ipConfig0", "absent"), intent(V4, "ipConfig0-v6")]);
    expect(moved.outcomes).toEqual([{ ok: true }, { ok: true }]);
  });
});
