import { describe, expect, it } from "vitest";
import {
  claimsDropped,
  claimsKeptBy,
  claimsUnder,
  doubtOf,
  nameClaimed,
  namedAsSent,
  recordClaims,
  settleDoubt,
  type GatewayClaim,
} from "../../src/core/gatewayPoolAddresses";
import {
  declarationAddressPrefix,
  fitToPool,
  planAddresses,
  targetAddressPrefix,
  wantedAddresses,
  type PoolMember,
} from "../../src/core/ipPoolAddresses";
import type { PoolAddress } from "../../src/core/models";
import { parseSelector } from "../../src/core/networkProfile";

/**
 * Application Gateway pools that list addresses (issue 43): a gateway's addresses carry no name, so the target's
 * record (its claims) names the ones it added, and one round of a pass is: read, name by the claims, plan, drop the
 * claims the write removes, write, claim what the answer holds under the target's prefix. These run that round on
 * plain lists, with another writer listing the same IP before and after poolsync.
 */

const T = "/subscriptions/x/resourcegroups/rg/providers/microsoft.compute/virtualmachinescalesets/ss";
const SUBNET = "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s";
const member = (id: string, ip: string): PoolMember => ({
  member: id,
  nics: [
    {
      name: "nic",
      primary: true,
      ipConfigurations: [{ name: "ipc", primary: true, privateIPAddress: ip, subnet: { id: SUBNET } }],
    },
  ],
});
const prefix = declarationAddressPrefix(T, "");
const GATEWAY = { pool: {}, gateway: {} };
const ip = (ipAddress: string): PoolAddress => ({ name: "", ipAddress });
const fqdn = (name: string): PoolAddress => ({ name: "", rest: { fqdn: name } });
/** What the gateway holds: the addresses as written, without names (NRP keeps none). */
const onGateway = (list: readonly PoolAddress[]) => list.map(({ name: _, ...rest }) => ({ ...rest, name: "" }));

/** One pass's round on a gateway pool: the list it leaves on the gateway, and the claims it records. */
function round(
  gateway: readonly PoolAddress[],
  claims: readonly GatewayClaim[],
  state: "present" | "absent",
  members: readonly PoolMember[],
): { gateway: PoolAddress[]; claims: GatewayClaim[] } {
  const named = nameClaimed(gateway, claims);
  const { wanted } = wantedAddresses(
    prefix,
    { selector: parseSelector(undefined), selectorText: "", state },
    state === "present" ? members : [],
  );
  const edit = planAddresses(named, [fitToPool({ prefix, wanted }, GATEWAY)]);
  if (!edit) return { gateway: [...gateway], claims: claimsUnder(named, targetAddressPrefix(T)) };
  const kept = claimsKeptBy(claims, edit);
  // Every claim kept before the write names an address the write keeps, with its IP.
  for (const c of kept) expect(edit.some((a) => a.name === c.name && a.ipAddress === c.ipAddress)).toBe(true);
  const answered = namedAsSent(onGateway(edit), edit);
  return { gateway: onGateway(edit), claims: claimsUnder(answered, targetAddressPrefix(T)) };
}

describe("Application Gateway pool addresses (issue 43)", () => {
  it("adds the members' IPs alone (no network, no name on the gateway) and keeps another writer's IP and FQDN", () => {
    const before = [ip("10.9.0.1"), fqdn("app.example.test")];
    const after = round(before, [], "present", [member("0", "10.1.0.4"), member("1", "10.1.0.5")]);
    expect(after.gateway).toEqual([...before, ip("10.1.0.4"), ip("10.1.0.5")]);
    expect(after.claims.map((c) => c.ipAddress)).toEqual(["10.1.0.4", "10.1.0.5"]);
    expect(after.claims.every((c) => c.name.startsWith(prefix))).toBe(true);

    const gone = round(after.gateway, after.claims, "absent", []);
    expect(gone.gateway).toEqual(before);
    expect(gone.claims).toEqual([]);
  });

  it("another writer listed the IP before us: poolsync adds nothing, claims nothing, and never removes it", () => {
    const before = [ip("10.1.0.4")];
    const present = round(before, [], "present", [member("0", "10.1.0.4")]);
    expect(present.gateway).toEqual(before);
    expect(present.claims).toEqual([]);
    const absent = round(present.gateway, present.claims, "absent", []);
    expect(absent.gateway).toEqual(before);
  });

  it("another writer lists the IP again after us: the absent removes one entry, ours, and theirs stays", () => {
    const added = round([], [], "present", [member("0", "10.1.0.4")]);
    expect(added.gateway).toEqual([ip("10.1.0.4")]);
    // The other writer appends its own entry of the same IP (NRP lists what it is sent).
    const both = [...added.gateway, ip("10.1.0.4")];
    const absent = round(both, added.claims, "absent", []);
    expect(absent.gateway).toEqual([ip("10.1.0.4")]);
    expect(absent.claims).toEqual([]);
    // And the next pass of the absent leaves it alone: it is no longer ours.
    expect(round(absent.gateway, absent.claims, "absent", []).gateway).toEqual([ip("10.1.0.4")]);
  });

  it("someone removed our address: the claim names nothing and the address goes back while wanted", () => {
    const added = round([ip("10.9.0.1")], [], "present", [member("0", "10.1.0.4")]);
    const removedByHand = added.gateway.filter((a) => a.ipAddress !== "10.1.0.4");
    const again = round(removedByHand, added.claims, "present", [member("0", "10.1.0.4")]);
    expect(again.gateway).toEqual([ip("10.9.0.1"), ip("10.1.0.4")]);
    expect(again.claims.map((c) => c.ipAddress)).toEqual(["10.1.0.4"]);
  });

  it("a member's new IP replaces its old one in place; the old claim is dropped before the write", () => {
    const added = round([], [], "present", [member("0", "10.1.0.4")]);
    const named = nameClaimed(added.gateway, added.claims);
    const { wanted } = wantedAddresses(
      prefix,
      { selector: parseSelector(undefined), selectorText: "", state: "present" },
      [member("0", "10.1.0.9")],
    );
    const edit = planAddresses(named, [fitToPool({ prefix, wanted }, GATEWAY)])!;
    expect(claimsKeptBy(added.claims, edit)).toEqual([]);
    expect(onGateway(edit)).toEqual([ip("10.1.0.9")]);
  });

  it("names one entry per claim, in list order, and never one entry twice", () => {
    const claims = [{ name: `${prefix}0`, ipAddress: "10.1.0.4" }];
    expect(nameClaimed([ip("10.1.0.4"), ip("10.1.0.4")], claims).map((a) => a.name)).toEqual([`${prefix}0`, ""]);
    expect(nameClaimed([ip("10.1.0.5")], claims).map((a) => a.name)).toEqual([""]);
    // Names read from the gateway (there are none) are never trusted: only the claims name.
    expect(nameClaimed([{ name: `${prefix}0`, ipAddress: "10.1.0.5" }], []).map((a) => a.name)).toEqual([""]);
  });
});

describe("a gateway write whose answer never came (issue 43)", () => {
  const sent = [ip("10.9.0.1"), { name: `${prefix}0`, ipAddress: "10.1.0.4" }, fqdn("app.example.test")];
  const doubt = doubtOf('W/"e0"', sent, targetAddressPrefix(T));

  it("keeps what it sent and its claims; pending while the gateway keeps the ETag it was conditional on", () => {
    expect(doubt).toEqual({
      ifMatch: 'W/"e0"',
      sent: ["10.9.0.1", "10.1.0.4", "app.example.test"],
      claims: [{ name: `${prefix}0`, ipAddress: "10.1.0.4" }],
    });
    expect(settleDoubt(doubt, { etag: 'W/"e0"', addresses: onGateway(sent) })).toEqual({ kind: "pending" });
  });

  it("landed when the pool lists exactly what it sent at another ETag: its claims name our address", () => {
    const pool = { etag: 'W/"e1"', addresses: onGateway(sent) };
    expect(settleDoubt(doubt, pool)).toEqual({ kind: "landed", claims: doubt.claims });
    expect(nameClaimed(pool.addresses, recordClaims({ claims: [], doubt }, pool)).map((a) => a.name)).toEqual([
      "",
      `${prefix}0`,
      "",
    ]);
  });

  it("unknown when anything else is listed (another write since, or ours never landed): nothing claimed", () => {
    for (const addresses of [[...onGateway(sent), ip("10.9.0.2")], onGateway(sent.slice(1)), [ip("10.9.0.1")]]) {
      const pool = { etag: 'W/"e2"', addresses };
      expect(settleDoubt(doubt, pool)).toEqual({ kind: "unknown" });
      expect(recordClaims({ claims: [], doubt }, pool)).toEqual([]);
    }
  });

  it("an absent in doubt: the claims it dropped stay ours while it is pending, and are gone once it landed or is unknown", () => {
    const ours = { name: `${prefix}0`, ipAddress: "10.1.0.4" };
    const kept = claimsKeptBy([ours], [ip("10.9.0.1")]);
    expect(kept).toEqual([]);
    const released = claimsDropped([ours], kept);
    expect(released).toEqual([ours]);
    const absent = doubtOf('W/"e0"', [ip("10.9.0.1")], targetAddressPrefix(T), released);
    const before = onGateway([ip("10.9.0.1"), ours]);
    // Pending: the gateway holds the ETag; our address is still ours, so the next write takes it out.
    expect(recordClaims({ claims: kept, doubt: absent }, { etag: 'W/"e0"', addresses: before })).toEqual([ours]);
    // Landed: the pool lists what it sent; nothing of ours is left to claim.
    expect(recordClaims({ claims: kept, doubt: absent }, { etag: 'W/"e1"', addresses: [ip("10.9.0.1")] })).toEqual([]);
    // Unknown: another write since; the address may be another writer's now, never claimed.
    expect(recordClaims({ claims: kept, doubt: absent }, { etag: 'W/"e2"', addresses: before })).toEqual([]);
  });

  it("drops one claim per address the write removes, even of one IP claimed twice", () => {
    const a = { name: `${prefix}0`, ipAddress: "10.1.0.4" };
    const b = { name: `${prefix}1`, ipAddress: "10.1.0.4" };
    expect(claimsDropped([a, b], [b])).toEqual([a]);
    expect(claimsDropped([a, b], [a, b])).toEqual([]);
    expect(claimsDropped([a], [])).toEqual([a]);
  });
});
