import { describe, expect, it } from "vitest";
import {
  addressName,
  contributionHeld,
  declarationAddressPrefix,
  fitToPool,
  planAddresses,
  targetAddressPrefix,
  wantedAddresses,
  type PoolMember,
} from "../../src/core/ipPoolAddresses";
import { parseSelector } from "../../src/core/networkProfile";

const T = "/subscriptions/x/resourcegroups/rg/providers/microsoft.compute/virtualmachinescalesets/ss";
const VNET = "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v";
const SUBNET = `${VNET}/subnets/s`;
const member = (id: string, v4: string, v6?: string): PoolMember => ({
  member: id,
  nics: [
    {
      name: "nic",
      primary: true,
      ipConfigurations: [
        { name: "ipc", primary: true, privateIPAddress: v4, subnet: { id: SUBNET } },
        ...(v6
          ? [{ name: "ipc6", privateIPAddressVersion: "IPv6", privateIPAddress: v6, subnet: { id: SUBNET } }]
          : []),
      ],
    },
  ],
});
const prefix = declarationAddressPrefix(T, "");
const intent = { selector: parseSelector(undefined), selectorText: "", state: "present" as const };

describe("IP-based pool addresses (issue 43)", () => {
  it("names every address so poolsync knows it as its own, per target and declaration, within 80 characters", () => {
    expect(prefix.startsWith(targetAddressPrefix(T))).toBe(true);
    expect(prefix).toMatch(/^poolsync-[0-9a-f]{8}-[0-9a-f]{4}-$/);
    expect(declarationAddressPrefix(T, "@IPv6")).not.toBe(prefix);
    expect(addressName(prefix, "x".repeat(64)).length).toBeLessThanOrEqual(80);
    expect(addressName(prefix, "x".repeat(64))).not.toBe(addressName(prefix, "x".repeat(63) + "y"));
  });

  it("wants the selected ip configuration's address of every member, v4 or v6, with the admin state where it applies", () => {
    const members = [member("0", "10.0.1.4", "fd00::4"), member("1", "10.0.1.5", "fd00::5")];
    const v4 = wantedAddresses(prefix, { ...intent, adminState: "Down", adminInstances: ["1"] }, members);
    expect(v4.wanted).toEqual([
      { name: `${prefix}0`, ipAddress: "10.0.1.4", virtualNetworkId: VNET },
      { name: `${prefix}1`, ipAddress: "10.0.1.5", virtualNetworkId: VNET, adminState: "Down" },
    ]);
    const v6 = wantedAddresses(prefix, { ...intent, selector: parseSelector("@IPv6") }, members);
    expect(v6.wanted.map((a) => a.ipAddress)).toEqual(["fd00::4", "fd00::5"]);
    expect(wantedAddresses(prefix, { ...intent, selector: parseSelector("nope") }, members).unplaced).toHaveLength(2);
  });

  it("adds, changes and removes only its own addresses; another writer's stay exactly, in place", () => {
    const theirs = { name: "aks-node-1", ipAddress: "10.0.1.9", virtualNetworkId: "/vnet", adminState: "Down" };
    const otherTarget = { name: `${declarationAddressPrefix(T + "2", "")}0`, ipAddress: "10.0.1.10" };
    const gone = { name: `${prefix}7`, ipAddress: "10.0.1.7", subnetId: SUBNET };
    const current = [theirs, gone, otherTarget];
    const { wanted } = wantedAddresses(prefix, intent, [member("0", "10.0.1.4")]);
    const next = planAddresses(current, [{ prefix, wanted }]);
    expect(next).toEqual([theirs, otherTarget, { name: `${prefix}0`, ipAddress: "10.0.1.4", virtualNetworkId: VNET }]);
    expect(planAddresses(next!, [{ prefix, wanted }])).toBeUndefined();
    expect(contributionHeld(next!, { prefix, wanted })).toBe(true);
    expect(contributionHeld(current, { prefix, wanted })).toBe(false);
    // Absent: its own addresses go, nobody else's.
    expect(planAddresses(next!, [{ prefix, wanted: [] }])).toEqual([theirs, otherTarget]);
  });

  it("does not add an address another writer already lists, and counts it as held", () => {
    const theirs = { name: "by-hand", ipAddress: "10.0.1.4" };
    const { wanted } = wantedAddresses(prefix, intent, [member("0", "10.0.1.4")]);
    expect(planAddresses([theirs], [{ prefix, wanted }])).toBeUndefined();
    expect(contributionHeld([theirs], { prefix, wanted })).toBe(true);
  });

  it("repairs an admin state someone set back, keeps one nobody declared", () => {
    const { wanted } = wantedAddresses(prefix, { ...intent, adminState: "Down" }, [member("0", "10.0.1.4")]);
    const reset = [{ name: `${prefix}0`, ipAddress: "10.0.1.4", virtualNetworkId: VNET, adminState: "None" }];
    expect(planAddresses(reset, [{ prefix, wanted }])?.[0]?.adminState).toBe("Down");
    const plain = wantedAddresses(prefix, intent, [member("0", "10.0.1.4")]).wanted;
    const setByThem = [{ ...reset[0]!, adminState: "Up" }];
    expect(planAddresses(setByThem, [{ prefix, wanted: plain }])).toBeUndefined();
  });

  it("names no virtual network in a pool that names its own (NRP refuses both)", () => {
    const { wanted } = wantedAddresses(prefix, intent, [member("0", "10.0.1.4")]);
    const fitted = fitToPool({ prefix, wanted }, { pool: { virtualNetwork: { id: VNET } } });
    expect(fitted.wanted).toEqual([{ name: `${prefix}0`, ipAddress: "10.0.1.4" }]);
    expect(fitToPool({ prefix, wanted }, { pool: {} }).wanted).toEqual(wanted);
  });

  it("a move's removal takes only the members the new pool holds", () => {
    const current = [
      { name: `${prefix}0`, ipAddress: "10.0.1.4" },
      { name: `${prefix}1`, ipAddress: "10.0.1.5" },
    ];
    const next = planAddresses(current, [{ prefix, wanted: [], removable: (a) => a.ipAddress === "10.0.1.4" }]);
    expect(next).toEqual([{ name: `${prefix}1`, ipAddress: "10.0.1.5" }]);
  });
});
